package io.github.idempotent.core;

/**
 * The payload of a call cannot be fingerprinted: an argument the JSON mapper cannot write
 * (a connection, a stream, an object graph that never ends). A bug of the application,
 * not of the caller, and one that a retry cannot fix: message listeners treat it as not
 * retryable rather than redeliver the message forever.
 */
public class IdempotencyPayloadException extends IdempotencyException {

	public IdempotencyPayloadException(String message, Throwable cause) {
		super("The request could not be checked against its idempotency key", message, cause);
	}

}
