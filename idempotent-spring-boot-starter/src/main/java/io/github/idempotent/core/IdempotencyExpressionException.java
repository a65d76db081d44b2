package io.github.idempotent.core;

/**
 * A key (or other) expression of {@code @Idempotent} cannot be evaluated against the
 * arguments of a call: for example {@code #headers['x-order-id'].toUpperCase()} on a
 * message without that header. A bug of the application, not of the caller, so an HTTP
 * call answers a server error (500, as for any {@link IllegalStateException}); and one
 * that a redelivery cannot fix, so message listeners treat it as not retryable (dead
 * letter) rather than redeliver the message forever.
 */
public class IdempotencyExpressionException extends IllegalStateException {

	public IdempotencyExpressionException(String message, Throwable cause) {
		super(message, cause);
	}

}
