package io.github.idempotent.core;

/**
 * The idempotency key is missing, blank, too long or malformed, or its expression cannot
 * be evaluated. Maps to HTTP 400.
 */
public class IdempotencyKeyException extends IdempotencyException {

	public IdempotencyKeyException(String message) {
		super(message);
	}

	public IdempotencyKeyException(String message, Throwable cause) {
		super(message, cause);
	}

}
