package io.github.idempotent.store;

import java.time.Duration;

import io.github.idempotent.core.Fingerprint;
import io.github.idempotent.core.IdempotencyKey;

/**
 * Storage of idempotency records. Each method is one atomic step; the protocol that
 * combines them lives once, in {@link io.github.idempotent.core.IdempotencyExecutor}.
 * Contention is a return value; an exception means the store could not be reached.
 */
public interface IdempotencyStore {

	/**
	 * Claims the key with an in-progress placeholder if it is absent (or expired), else
	 * reports what holds it.
	 * @return {@link ClaimResult.Acquired} with the owner token,
	 * {@link ClaimResult.InProgress} or {@link ClaimResult.Completed}
	 */
	ClaimResult claim(IdempotencyKey key, Fingerprint fingerprint, Duration lease);

	/**
	 * Stores the result and keeps it for {@code ttl}, only if the record is still in
	 * progress under {@code token}.
	 * @return whether the record was still held by {@code token}
	 */
	boolean complete(IdempotencyKey key, String token, StoredResult result, Duration ttl);

	/**
	 * Deletes the in-progress record, only if it is still held by {@code token}.
	 * @return whether the record was still held by {@code token}
	 */
	boolean release(IdempotencyKey key, String token);

	/**
	 * Extends the lease of the in-progress record, only if it is still held by
	 * {@code token}.
	 * @return whether the record was still held by {@code token}
	 */
	boolean renew(IdempotencyKey key, String token, Duration lease);

	/**
	 * Longest key the store accepts; longer keys are hashed by {@link IdempotencyKey#of}.
	 */
	default int maxKeyLength() {
		return 512;
	}

}
