package io.github.idempotent.core;

import java.time.Duration;

/**
 * The record of the key was written by a newer version in a format this one does not
 * read, as during a rolling upgrade. The method did not run; HTTP 503 with
 * {@code Retry-After}, as a retry may reach a newer instance.
 */
public class IdempotencyRecordTooNewException extends IdempotencyStoreUnavailableException {

	public IdempotencyRecordTooNewException(String message, Duration retryAfter) {
		super("The record of this idempotency key was written by a newer version of this service, which this "
				+ "instance cannot read; retry later with the same key", message, retryAfter, null);
	}

}
