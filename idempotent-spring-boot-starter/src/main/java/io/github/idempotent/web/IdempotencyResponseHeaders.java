package io.github.idempotent.web;

import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyPolicy;

/**
 * Marks HTTP responses of idempotent calls: the key is echoed in the
 * {@code Idempotency-Key} header, and a replayed response carries
 * {@code Idempotent-Replayed: true}. The headers are set on the servlet response before
 * the handler's return value is written, so they join a replayed entity's own headers.
 */
public class IdempotencyResponseHeaders implements IdempotencyObserver {

	/**
	 * Header that marks a response replayed from the store.
	 */
	public static final String REPLAYED = "Idempotent-Replayed";

	private final String keyHeaderName;

	public IdempotencyResponseHeaders(String keyHeaderName) {
		this.keyHeaderName = keyHeaderName;
	}

	@Override
	public void executed(IdempotencyPolicy policy, String key) {
		HttpServletResponse response = currentResponse();
		if (response != null && !response.isCommitted()) {
			response.setHeader(this.keyHeaderName, key);
		}
	}

	@Override
	public void replayed(IdempotencyPolicy policy, String key) {
		HttpServletResponse response = currentResponse();
		if (response != null && !response.isCommitted()) {
			response.setHeader(this.keyHeaderName, key);
			response.setHeader(REPLAYED, "true");
		}
	}

	private static HttpServletResponse currentResponse() {
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		return (attributes instanceof ServletRequestAttributes servlet) ? servlet.getResponse() : null;
	}

}
