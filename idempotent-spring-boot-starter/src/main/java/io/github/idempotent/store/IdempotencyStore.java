package io.github.idempotent.store;

import java.time.Duration;

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
	 * {@link ClaimResult.InProgress} or {@link ClaimResult.Completed}; or
	 * {@link ClaimResult.Damaged} when the key holds a value the store cannot read, which
	 * it leaves as it is
	 */
	ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease);

	/**
	 * Stores the result and keeps it for {@code ttl}, if the record is still in progress
	 * under {@code token}, even past its lease: only a take-over changes the token, so a
	 * token that still holds proves that nobody else ran the call. A record that has
	 * vanished (its lease expired and nobody claimed it since) is written anew, as
	 * completed with {@code fingerprint}. The same completion sent again (the executor
	 * repeats one whose answer was lost) finds the record it wrote and answers
	 * {@code true}: a completed record keeps the token of the owner that completed it.
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
	 * Extends the lease of the in-progress record to {@code lease} from now, if it is
	 * still held by {@code token}, even past its lease. A record that has vanished is
	 * claimed again under the same token and {@code fingerprint}, so a call that outlived
	 * its lease without a take-over is protected again. A record an operator deleted with
	 * force has not vanished: the store marks the deletion (a tombstone of the token, see
	 * {@link InspectableIdempotencyStore#deleteInProgress}) and this renewal fails.
	 * @return {@code false} only if another owner took the key over (or completed it)
	 */
	boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease);

	/**
	 * Longest key the store accepts; longer keys are hashed by {@link RecordKey#of}.
	 */
	default int maxKeyLength() {
		return 512;
	}

}
