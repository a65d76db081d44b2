package io.github.idempotent.web;

import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

import io.github.idempotent.aop.IdempotentInterceptor;
import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyPolicy;

/**
 * Marks HTTP responses of idempotent calls: a key the client sent in the
 * {@code Idempotency-Key} header is echoed in it (a key taken from the body by an
 * expression is not: it may be data the client never meant as a header), and a replayed
 * response carries {@code Idempotent-Replayed: true}. The headers are set on the servlet
 * response before the handler's return value is written, so they join a replayed entity's
 * own headers.
 */
public class IdempotencyResponseHeaders implements IdempotencyObserver {

	/**
	 * Default header that marks a response replayed from the store.
	 */
	public static final String REPLAYED = "Idempotent-Replayed";

	private final String keyHeaderName;

	private final String replayedHeaderName;

	public IdempotencyResponseHeaders(String keyHeaderName) {
		this(keyHeaderName, REPLAYED);
	}

	/**
	 * @param keyHeaderName header that carries the key
	 * @param replayedHeaderName header that marks a replay (other libraries and gateways
	 * spell it differently)
	 */
	public IdempotencyResponseHeaders(String keyHeaderName, String replayedHeaderName) {
		this.keyHeaderName = keyHeaderName;
		this.replayedHeaderName = replayedHeaderName;
	}

	@Override
	public void executed(IdempotencyPolicy policy, String key) {
		if (!IdempotentInterceptor.isNestedCall()) {
			mark(key, false);
		}
	}

	@Override
	public void replayed(IdempotencyPolicy policy, String key) {
		if (!IdempotentInterceptor.isNestedCall()) {
			mark(key, true);
		}
	}

	/**
	 * A {@code CompletableFuture} call completes on another thread, where no request is
	 * bound: capture the calling thread's response now, so that the headers are set on it
	 * before the future's value is written (Spring MVC writes it in an async dispatch
	 * after the future completes, and the executor notifies before completing it).
	 */
	@Override
	public IdempotencyObserver forAsyncCall() {
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		if (!(attributes instanceof ServletRequestAttributes servlet)) {
			return this;
		}
		if (IdempotentInterceptor.isNestedCall()) {
			return IdempotencyObserver.NONE;
		}
		return new IdempotencyObserver() {

			@Override
			public void executed(IdempotencyPolicy policy, String key) {
				mark(servlet, key, false);
			}

			@Override
			public void replayed(IdempotencyPolicy policy, String key) {
				mark(servlet, key, true);
			}

		};
	}

	private void mark(String key, boolean replayed) {
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		if (attributes instanceof ServletRequestAttributes servlet) {
			mark(servlet, key, replayed);
		}
	}

	private void mark(ServletRequestAttributes servlet, String key, boolean replayed) {
		HttpServletResponse response = servlet.getResponse();
		if (response == null || response.isCommitted()) {
			return;
		}
		if (servlet.getRequest().getHeader(this.keyHeaderName) != null) {
			response.setHeader(this.keyHeaderName, key);
		}
		if (replayed) {
			response.setHeader(this.replayedHeaderName, "true");
		}
	}

}
