package io.github.idempotent.web;

import java.io.IOException;
import java.util.Collection;
import java.util.List;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.core.Ordered;
import org.springframework.util.Assert;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.servlet.DispatcherServlet;

/**
 * Records the response of an {@code @Idempotent} handler method on Spring MVC as it was
 * written, so that a replay is byte for byte what the first caller got: the status, the
 * headers set from the handler's call on, and the body as the message converters (and any
 * {@code ResponseBodyAdvice}) produced it. Every response passes through untouched until
 * the web layer starts a guarded call of the request's handler; then its body is held
 * until the request's last dispatch (the async one, for a future or a {@code Mono}) has
 * ended, stored, and sent. The request's body is kept too, once read, so that the guard
 * can fingerprint it and the handler still read it. Runs after Spring Security's filters,
 * so that the headers they write for each response are theirs to write again on a replay.
 */
public class ResponseRecordingFilter extends OncePerRequestFilter implements Ordered {

	/**
	 * Order of this filter: after Spring Security's filter chain (-100) and the request
	 * context and observation filters.
	 */
	public static final int ORDER = 0;

	private static final String RECORDING = ResponseRecordingFilter.class.getName() + ".RECORDING";

	private final ReplayedHeaders replayedHeaders;

	private final ReplayCustomizers customizers;

	private final long maxResultSize;

	/**
	 * @param excludedHeaders response headers never stored, case-insensitive, besides
	 * credentials and hop-by-hop headers
	 * @param replayedOnlyHeaders when not empty, the only response headers stored,
	 * case-insensitive, still less the excluded ones, credentials and hop-by-hop headers
	 * @param maxResultSize largest body recorded, in bytes
	 * @param customizers shown each replay before it is written, in this order
	 */
	public ResponseRecordingFilter(Collection<String> excludedHeaders, Collection<String> replayedOnlyHeaders,
			long maxResultSize, List<IdempotentReplayCustomizer> customizers) {
		Assert.isTrue(maxResultSize > 0, "maxResultSize must be positive");
		Assert.notNull(customizers, "customizers must not be null");
		this.replayedHeaders = new ReplayedHeaders(excludedHeaders, replayedOnlyHeaders);
		this.customizers = new ReplayCustomizers(customizers, this.replayedHeaders);
		this.maxResultSize = maxResultSize;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		if (request.getAttribute(RECORDING) instanceof RecordingServletResponse recording) {
			// The async dispatch of a request this filter wraps: the response is the
			// recording one, wrapped by the async machinery.
			proceed(request, response, chain, recording);
			return;
		}
		RecordingServletResponse recording = new RecordingServletResponse(response, this.replayedHeaders,
				this.maxResultSize, this.customizers);
		request.setAttribute(RECORDING, recording);
		proceed(new KeptBodyRequest(request), recording, chain, recording);
	}

	private void proceed(HttpServletRequest request, HttpServletResponse response, FilterChain chain,
			RecordingServletResponse recording) throws ServletException, IOException {
		try {
			chain.doFilter(request, response);
		}
		catch (IOException | ServletException | RuntimeException | Error ex) {
			recording.abandon();
			throw ex;
		}
		if (request.isAsyncStarted()) {
			// Finished by the async dispatch; abandoned if the request ends without one.
			request.getAsyncContext().addListener(recording.abandonOnEnd());
		}
		else {
			recording.finish(request.getAttribute(DispatcherServlet.EXCEPTION_ATTRIBUTE) != null);
		}
	}

	@Override
	protected boolean shouldNotFilterAsyncDispatch() {
		return false;
	}

	/**
	 * The recording response of {@code request}, or {@code null} when this filter does
	 * not wrap it.
	 */
	static @Nullable RecordingServletResponse recording(HttpServletRequest request) {
		return (request.getAttribute(RECORDING) instanceof RecordingServletResponse recording) ? recording : null;
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
