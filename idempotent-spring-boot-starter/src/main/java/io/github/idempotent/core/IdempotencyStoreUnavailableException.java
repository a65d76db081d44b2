package io.github.idempotent.core;

import java.time.Duration;

/**
 * The store could not be reached and the failure mode is {@link FailureMode#CLOSED
 * closed}: the method did not run. Maps to HTTP 503 with {@code Retry-After}.
 */
public class IdempotencyStoreUnavailableException extends IdempotencyException {

	private final Duration retryAfter;

	public IdempotencyStoreUnavailableException(String operation, Duration retryAfter, Throwable cause) {
		super("The request was not processed because its idempotency key could not be checked; "
				+ "retry later with the same key",
				"Idempotency store unavailable, " + operation + " was not run; retry later with the same key (" + cause
						+ ")",
				cause);
		this.retryAfter = retryAfter;
	}

	public Duration getRetryAfter() {
		return this.retryAfter;
	}

}
