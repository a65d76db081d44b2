package io.github.idempotent.store;

import java.time.Duration;

/**
 * Outcome of {@link IdempotencyStore#claim}: who holds the key.
 */
public sealed interface ClaimResult {

	/**
	 * The caller now owns the key and must complete or release it with {@code token}.
	 */
	record Acquired(String token) implements ClaimResult {
	}

	/**
	 * Another caller holds the key and is still running.
	 */
	record InProgress(Fingerprint fingerprint, Duration leaseRemaining) implements ClaimResult {
	}

	/**
	 * The operation has completed; its result is stored.
	 */
	record Completed(Fingerprint fingerprint, StoredResult result) implements ClaimResult {
	}

	/**
	 * The key holds something the store cannot read as a record: bytes of another layout
	 * or none, a truncated value, a value of another type. Not the absence of a record:
	 * whatever was there may be the trace of a call that ran, so the caller must neither
	 * run the method nor overwrite it, and answers that the result is unavailable.
	 *
	 * @param damage what is wrong with the record, for the log and for operators
	 */
	record Damaged(String damage) implements ClaimResult {
	}

}
