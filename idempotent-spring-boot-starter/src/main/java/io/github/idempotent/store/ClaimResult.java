package io.github.idempotent.store;

import java.time.Duration;
import java.time.Instant;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * Outcome of {@link IdempotencyStore#claim}: who holds the key.
 */
public sealed interface ClaimResult {

	/**
	 * The caller now owns the key and must complete or release it with {@code token}.
	 * <p>
	 * A claim that takes the key over from a call that never finished (its lease ran out,
	 * or an operator deleted its record in progress) says so: that call may have had side
	 * effects before it stopped, and the method running now can look for them. A key
	 * whose previous call ended by releasing it (the method threw) starts again at
	 * attempt 1 only when that call was attempt 1: its outcome was a failure its caller
	 * saw. A released takeover keeps the memory: the attempts before it never finished,
	 * so the next claim is the attempt after the released one, and
	 * {@code previousAttemptStartedAt} is when the released one claimed the key.
	 *
	 * @param token the owner token that completes, releases and renews the claim
	 * @param attempt 1 for a key that no unfinished call held before; one more than the
	 * attempt taken over otherwise
	 * @param previousAttemptStartedAt when the attempt taken over claimed the key, to the
	 * second, by the clock of the instance that claimed it; {@code null} on attempt 1, or
	 * when the store does not know
	 */
	record Acquired(String token, int attempt, @Nullable Instant previousAttemptStartedAt) implements ClaimResult {

		public Acquired {
			Assert.hasText(token, "token must not be empty");
			Assert.isTrue(attempt >= 1, "attempt must be 1 or more");
			Assert.isTrue(attempt > 1 || previousAttemptStartedAt == null, "the first attempt has no previous attempt");
		}

		/**
		 * The first attempt at a key.
		 */
		public Acquired(String token) {
			this(token, 1, null);
		}

		/**
		 * Whether this claim took the key over from a call that never finished.
		 */
		public boolean isTakeover() {
			return this.attempt > 1;
		}

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
	 * or none, a truncated value, a value of another type, or a record of a later format
	 * than this version reads. Not the absence of a record: whatever was there may be the
	 * trace of a call that ran, so the caller must neither run the method nor overwrite
	 * it. A damaged record answers that the result is unavailable; one of a later format
	 * answers "retry later", since a retry may reach an instance of the version that
	 * wrote it.
	 *
	 * @param damage what is wrong with the record, for the log and for operators
	 * @param laterFormat whether a newer version wrote it, in a format this one does not
	 * read (docs/stores.md, "Record format 1")
	 */
	record Damaged(String damage, boolean laterFormat) implements ClaimResult {

		/**
		 * A damaged record.
		 */
		public Damaged(String damage) {
			this(damage, false);
		}

	}

}
