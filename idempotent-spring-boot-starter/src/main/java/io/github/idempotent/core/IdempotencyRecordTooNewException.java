package io.github.idempotent.core;

import java.time.Duration;

/**
 * The record of the call's key was written by a newer version of the starter, in a format
 * this one does not read (docs/stores.md, "Record format 1"): during a rolling upgrade,
 * or after a rollback. The method did not run. Maps to HTTP 503 with {@code Retry-After},
 * since the retry may reach an instance of the newer version; a listener gets its message
 * again later. Never answered as a damaged record (500), and never a reason to run the
 * method again: the record may hold the outcome of a call that ran.
 */
public class IdempotencyRecordTooNewException extends IdempotencyStoreUnavailableException {

	public IdempotencyRecordTooNewException(String message, Duration retryAfter) {
		super("The record of this idempotency key was written by a newer version of this service, which this "
				+ "instance cannot read; retry later with the same key", message, retryAfter, null);
	}

}
