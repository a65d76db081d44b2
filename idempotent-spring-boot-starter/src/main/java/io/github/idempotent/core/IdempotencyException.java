package io.github.idempotent.core;

/**
 * Base of the exceptions the idempotency protocol throws.
 */
public abstract class IdempotencyException extends RuntimeException {

	protected IdempotencyException(String message) {
		super(message);
	}

	protected IdempotencyException(String message, Throwable cause) {
		super(message, cause);
	}

}
