package io.github.idempotent.store;

import java.time.Duration;

/**
 * Storage of idempotency records. Each method is one atomic step; the protocol that
 * combines them lives once, in {@link io.github.idempotent.core.IdempotencyExecutor}.
 * Contention is a return value; an exception means the store could not be reached.
 */
public interface IdempotencyStore {

	/**
	 * Claims the key with an in-progress placeholder if it is absent or expired, else
	 * reports what holds it.
	 * @return {@link ClaimResult.Acquired}, {@link ClaimResult.InProgress},
	 * {@link ClaimResult.Completed}, or {@link ClaimResult.Damaged} for a value the store
	 * cannot read, left as it is
	 */
	ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease);

	/**
	 * Stores the result for {@code ttl} if the record is still in progress under
	 * {@code token}, even past its lease; a vanished record is written anew. The same
	 * completion sent again finds its own record and answers {@code true}.
	 * @return {@code false} only if another owner took the key over (or completed it)
	 */
	boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result, Duration ttl);

	/**
	 * Deletes the in-progress record, if it is still held by {@code token}.
	 * @return {@code false} only if another owner took the key over (or completed it); a
	 * record that has already vanished counts as released
	 */
	boolean release(RecordKey key, String token);

	/**
	 * Extends the lease to {@code lease} from now if {@code token} still holds the
	 * record, even past its lease; a vanished record is claimed again under the same
	 * token. A record an operator deleted with force has not vanished: the renewal fails.
	 * @return {@code false} only if another owner took the key over (or completed it)
	 */
	boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease);

	/** Longest key the store accepts; longer keys are hashed by {@link RecordKey#of}. */
	default int maxKeyLength() {
		return 512;
	}

}
