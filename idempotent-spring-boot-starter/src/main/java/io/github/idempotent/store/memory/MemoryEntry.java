package io.github.idempotent.store.memory;

import java.time.Duration;
import java.time.Instant;

import org.jspecify.annotations.Nullable;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;

/**
 * A record of an {@link InMemoryIdempotencyStore}, or with {@code tombstone} the mark an
 * operator's forced delete (or the release of a takeover) left of the owner it fenced.
 * Times are {@link System#nanoTime()}.
 */
record MemoryEntry(String token, Fingerprint fingerprint, @Nullable StoredResult result, long expiresAt,
		@Nullable Instant claimedAt, int attempt, boolean tombstone) {

	/** This record as the tombstone of its owner. */
	MemoryEntry fenced() {
		return new MemoryEntry(this.token, this.fingerprint, null, this.expiresAt, this.claimedAt, this.attempt, true);
	}

	boolean isExpired(long now) {
		return now - this.expiresAt >= 0;
	}

	IdempotencyRecord toRecord(RecordKey key, long now) {
		boolean inProgress = this.result == null;
		return new IdempotencyRecord(key,
				inProgress ? IdempotencyRecord.State.IN_PROGRESS : IdempotencyRecord.State.COMPLETED, this.fingerprint,
				inProgress ? this.claimedAt : null, Duration.ofNanos(this.expiresAt - now), this.result);
	}

}
