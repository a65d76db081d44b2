package io.github.idempotent.core;

/**
 * The payload of a call cannot be fingerprinted (the JSON mapper cannot write it): an
 * application bug, not retried by message listeners.
 */
public class IdempotencyPayloadException extends IdempotencyException {

	public IdempotencyPayloadException(String message, Throwable cause) {
		super("The request could not be checked against its idempotency key", message, cause);
	}

}
