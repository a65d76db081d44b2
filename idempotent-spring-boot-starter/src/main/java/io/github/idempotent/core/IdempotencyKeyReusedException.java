package io.github.idempotent.core;

/** The key was first used with a different payload. Maps to HTTP 422. */
public class IdempotencyKeyReusedException extends IdempotencyException {

	private final String key;

	private final String operation;

	public IdempotencyKeyReusedException(String key, String operation) {
		super("This idempotency key was already used with a different payload; send a new key for a new request",
				"Idempotency key '" + key + "' of " + operation
						+ " was already used with a different payload; send a new key for a new request",
				null);
		this.key = key;
		this.operation = operation;
	}

	/** Key as the caller sent it (unscoped). */
	public String getKey() {
		return this.key;
	}

	public String getOperation() {
		return this.operation;
	}

}
