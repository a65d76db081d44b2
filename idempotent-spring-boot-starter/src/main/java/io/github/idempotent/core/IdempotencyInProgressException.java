package io.github.idempotent.core;

import java.time.Duration;

/** A call with the same key is still running: HTTP 409 with {@code Retry-After}. */
public class IdempotencyInProgressException extends IdempotencyException {

	private final String key;

	private final String operation;

	private final Duration retryAfter;

	public IdempotencyInProgressException(String key, String operation, Duration retryAfter) {
		super("A request with this idempotency key is still in progress; retry later with the same key",
				"A request with idempotency key '" + key + "' of " + operation + " is still in progress; retry after "
						+ retryAfter.toMillis() + " ms with the same key",
				null);
		this.key = key;
		this.operation = operation;
		this.retryAfter = retryAfter;
	}

	/** Key as the caller sent it (unscoped). */
	public String getKey() {
		return this.key;
	}

	public String getOperation() {
		return this.operation;
	}

	public Duration getRetryAfter() {
		return this.retryAfter;
	}

	/** {@code true}: the call that holds the key may have completed by then. */
	@Override
	public boolean isRetryable() {
		return true;
	}

}
