package io.github.idempotent.core;

import java.time.Duration;

/**
 * The store had no room for the key and the method did not run, in every
 * {@link FailureMode}: running unprotected would let whoever fills the store turn the
 * protection off. HTTP 503 with {@code Retry-After}.
 */
public class IdempotencyStoreFullException extends IdempotencyStoreUnavailableException {

	public IdempotencyStoreFullException(String operation, Duration retryAfter, Throwable cause) {
		super("The request was not processed because the idempotency store has no room for its key; "
				+ "retry later with the same key",
				"Idempotency store full, " + operation + " was not run; retry later with the same key (" + cause + ")",
				retryAfter, cause);
	}

}
