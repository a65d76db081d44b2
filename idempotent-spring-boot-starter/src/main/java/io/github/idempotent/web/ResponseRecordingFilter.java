package io.github.idempotent.web;

import java.io.IOException;
import java.lang.reflect.Method;
import java.util.Collection;
import java.util.List;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.core.Ordered;
import org.springframework.util.Assert;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.HandlerMapping;

import io.github.idempotent.aop.ResponseRecording;
import io.github.idempotent.core.OutcomeRecorder;

/**
 * Records the response of an {@code @Idempotent} handler method on Spring MVC as it was
 * written, so that a replay is byte for byte what the first caller got: the status, the
 * headers the response set after the method returned, and the body as the message
 * converters (and any {@code ResponseBodyAdvice}) produced it. Every response passes
 * through untouched until such a method returns; then its body is held until the
 * request's last dispatch (the async one, for a future or a {@code Mono}) has ended,
 * stored, and sent. Runs after Spring Security's filters, so that the headers they write
 * for each response are theirs to write again on a replay.
 */
public class ResponseRecordingFilter extends OncePerRequestFilter implements ResponseRecording, Ordered {

	/**
	 * Order of this filter: after Spring Security's filter chain (-100) and the request
	 * context and observation filters.
	 */
	public static final int ORDER = 0;

	private static final String RECORDING = ResponseRecordingFilter.class.getName() + ".RECORDING";

	private final ReplayedHeaders replayedHeaders;

	private final ReplayCustomizers customizers;

	private final long maxResultSize;

	private final boolean record;

	/**
	 * @param excludedHeaders response headers never stored, case-insensitive, besides
	 * credentials and hop-by-hop headers
	 * @param maxResultSize largest body recorded, in bytes: a larger one stores the
	 * method's return value, as before
	 * @param record whether responses are recorded; when not, recorded responses are
	 * still replayed, and return values stored through the codec
	 */
	public ResponseRecordingFilter(Collection<String> excludedHeaders, long maxResultSize, boolean record) {
		this(excludedHeaders, maxResultSize, record, List.of());
	}

	/**
	 * @param excludedHeaders response headers never stored, case-insensitive, besides
	 * credentials and hop-by-hop headers
	 * @param maxResultSize largest body recorded, in bytes: a larger one stores the
	 * method's return value, as before
	 * @param record whether responses are recorded; when not, recorded responses are
	 * still replayed, and return values stored through the codec
	 * @param customizers shown each replay before it is written, in this order
	 */
	public ResponseRecordingFilter(Collection<String> excludedHeaders, long maxResultSize, boolean record,
			List<IdempotentReplayCustomizer> customizers) {
		this(excludedHeaders, List.of(), maxResultSize, record, customizers);
	}

	/**
	 * @param excludedHeaders response headers never stored, case-insensitive, besides
	 * credentials and hop-by-hop headers
	 * @param replayedOnlyHeaders when not empty, the only response headers stored,
	 * case-insensitive, still less the excluded ones, credentials and hop-by-hop headers
	 * @param maxResultSize largest body recorded, in bytes: a larger one stores the
	 * method's return value, as before
	 * @param record whether responses are recorded; when not, recorded responses are
	 * still replayed, and return values stored through the codec
	 * @param customizers shown each replay before it is written, in this order
	 */
	public ResponseRecordingFilter(Collection<String> excludedHeaders, Collection<String> replayedOnlyHeaders,
			long maxResultSize, boolean record, List<IdempotentReplayCustomizer> customizers) {
		Assert.isTrue(maxResultSize > 0, "maxResultSize must be positive");
		Assert.notNull(customizers, "customizers must not be null");
		this.replayedHeaders = new ReplayedHeaders(excludedHeaders, replayedOnlyHeaders);
		this.customizers = new ReplayCustomizers(customizers, this.replayedHeaders);
		this.maxResultSize = maxResultSize;
		this.record = record;
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
				this.maxResultSize, this.record, this.customizers);
		request.setAttribute(RECORDING, recording);
		proceed(request, recording, chain, recording);
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

	@Override
	public @Nullable OutcomeRecorder recorderFor(Method method, @Nullable Class<?> targetClass) {
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		if (!(attributes instanceof ServletRequestAttributes servlet)) {
			return null;
		}
		HttpServletRequest request = servlet.getRequest();
		if (!(request.getAttribute(RECORDING) instanceof RecordingServletResponse recording)) {
			return null;
		}
		HandlerMethod handler = HandlerMethods
			.handlerCalled(request.getAttribute(HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE), method, targetClass);
		if (handler == null) {
			return null;
		}
		return HandlerMethods.isRecorded(handler) ? recording.handling(handler) : recording.replayingOnly(handler);
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
