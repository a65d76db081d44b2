package io.github.idempotent.core;

/** A call's key or scope is missing, blank, too long or malformed (HTTP 400). */
public class IdempotencyKeyException extends IdempotencyException {

	public IdempotencyKeyException(String message) {
		super(message);
	}

	public IdempotencyKeyException(String message, Throwable cause) {
		super(message, cause);
	}

	/**
	 * @param detail what the caller is told
	 * @param message what the log says
	 */
	public IdempotencyKeyException(String detail, String message) {
		super(detail, message, null);
	}

}
