package io.github.idempotent.core;

/**
 * An expression of {@code @Idempotent} cannot be evaluated against a call's arguments: an
 * application bug, answered with 500 and not retried by message listeners.
 */
public class IdempotencyExpressionException extends IllegalStateException {

	public IdempotencyExpressionException(String message, Throwable cause) {
		super(message, cause);
	}

}
