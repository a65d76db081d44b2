package io.github.idempotent.core;

import java.time.Duration;

/**
 * The store could not be reached with {@link FailureMode#CLOSED}, or was full: the method
 * did not run. HTTP 503 with {@code Retry-After}.
 */
public class IdempotencyStoreUnavailableException extends IdempotencyException {

	private final Duration retryAfter;

	public IdempotencyStoreUnavailableException(String operation, Duration retryAfter, Throwable cause) {
		this("The request was not processed because its idempotency key could not be checked; "
				+ "retry later with the same key",
				"Idempotency store unavailable, " + operation + " was not run; retry later with the same key (" + cause
						+ ")",
				retryAfter, cause);
	}

	protected IdempotencyStoreUnavailableException(String detail, String message, Duration retryAfter,
			Throwable cause) {
		super(detail, message, cause);
		this.retryAfter = retryAfter;
	}

	public Duration getRetryAfter() {
		return this.retryAfter;
	}

	/** {@code true}: the method did not run, and the store may be back by then. */
	@Override
	public boolean isRetryable() {
		return true;
	}

}
