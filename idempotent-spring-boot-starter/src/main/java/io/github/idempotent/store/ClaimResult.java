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

}
