package io.github.idempotent.core;

import java.time.Duration;

/**
 * The store had no room for the call's key, and the method did not run: in every
 * {@link FailureMode}, since a store that is full is not an outage, and running
 * unprotected would let whoever fills it turn the protection off for everyone. Maps to
 * HTTP 503 with {@code Retry-After} and a problem of its own; a listener gets its message
 * again later, as during an outage (it is an {@link IdempotencyStoreUnavailableException}
 * for everything that handles those).
 */
public class IdempotencyStoreFullException extends IdempotencyStoreUnavailableException {

	public IdempotencyStoreFullException(String operation, Duration retryAfter, Throwable cause) {
		super("The request was not processed because the idempotency store has no room for its key; "
				+ "retry later with the same key",
				"Idempotency store full, " + operation + " was not run; retry later with the same key (" + cause + ")",
				retryAfter, cause);
	}

}
