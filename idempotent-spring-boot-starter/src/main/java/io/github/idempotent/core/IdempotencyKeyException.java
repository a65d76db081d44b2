package io.github.idempotent.core;

/**
 * The idempotency key (or the scope) of a call is missing, blank, too long or malformed.
 * Maps to HTTP 400.
 */
public class IdempotencyKeyException extends IdempotencyException {

	public IdempotencyKeyException(String message) {
		super(message);
	}

	public IdempotencyKeyException(String message, Throwable cause) {
		super(message, cause);
	}

	/**
	 * @param detail what the caller is told
	 * @param message what the log says, with the method and expression at fault
	 */
	public IdempotencyKeyException(String detail, String message) {
		super(detail, message, null);
	}

}
