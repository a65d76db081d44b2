package io.github.idempotent.web;

import java.io.IOException;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.core.Ordered;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.servlet.DispatcherServlet;

/**
 * Records the response of a guarded Spring MVC handler as it was written, and keeps the
 * request's body for the fingerprint. Runs after Spring Security's filters, so that the
 * headers they write are written again on a replay.
 */
class ResponseRecordingFilter extends OncePerRequestFilter implements Ordered {

	// After Spring Security's filter chain (-100) and the observation filters.
	static final int ORDER = 0;

	private static final String RECORDING = ResponseRecordingFilter.class.getName() + ".RECORDING";

	private final WebContract contract;

	ResponseRecordingFilter(WebContract contract) {
		this.contract = contract;
		// Eager, as WebContract#customizers says.
		contract.customizers();
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		if (request.getAttribute(RECORDING) instanceof RecordingServletResponse recording) {
			// An async dispatch: the response is the recording one, wrapped again.
			proceed(request, response, chain, recording);
			return;
		}
		RecordingServletResponse recording = new RecordingServletResponse(response, this.contract);
		request.setAttribute(RECORDING, recording);
		proceed(new KeptBodyRequest(request, recording), recording, chain, recording);
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
			request.getAsyncContext().addListener(recording);
		}
		else {
			recording.finish(request.getAttribute(DispatcherServlet.EXCEPTION_ATTRIBUTE) != null);
		}
	}

	@Override
	protected boolean shouldNotFilterAsyncDispatch() {
		return false;
	}

	static @Nullable RecordingServletResponse recording(HttpServletRequest request) {
		return (request.getAttribute(RECORDING) instanceof RecordingServletResponse recording) ? recording : null;
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
