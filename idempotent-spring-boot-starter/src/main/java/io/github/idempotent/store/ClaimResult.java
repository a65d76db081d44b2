package io.github.idempotent.store;

import java.time.Duration;
import java.time.Instant;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/** Outcome of {@link IdempotencyStore#claim}: who holds the key. */
public sealed interface ClaimResult {

	/**
	 * The caller now owns the key and must complete or release it with {@code token}. A
	 * claim that takes the key over from a call that never finished says so: that call
	 * may have had side effects, and the method can look for them.
	 *
	 * @param token the owner token that completes, releases and renews the claim
	 * @param attempt 1 for a key that no unfinished call held before; one more than the
	 * attempt taken over otherwise
	 * @param previousAttemptStartedAt when the attempt taken over claimed the key, by its
	 * instance's clock; {@code null} on attempt 1, or when the store does not know
	 */
	record Acquired(String token, int attempt, @Nullable Instant previousAttemptStartedAt) implements ClaimResult {

		public Acquired {
			Assert.hasText(token, "token must not be empty");
			Assert.isTrue(attempt >= 1, "attempt must be 1 or more");
			Assert.isTrue(attempt > 1 || previousAttemptStartedAt == null, "the first attempt has no previous attempt");
		}

		/** The first attempt at a key. */
		public Acquired(String token) {
			this(token, 1, null);
		}

		/** Whether this claim took the key over from a call that never finished. */
		public boolean isTakeover() {
			return this.attempt > 1;
		}

	}

	/** Another caller holds the key and is still running. */
	record InProgress(Fingerprint fingerprint, Duration leaseRemaining) implements ClaimResult {
	}

	/** The operation has completed; its result is stored. */
	record Completed(Fingerprint fingerprint, StoredResult result) implements ClaimResult {
	}

	/**
	 * The key holds something the store cannot read as a record. Not the absence of a
	 * record: it may be the trace of a call that ran, so the caller must neither run the
	 * method nor overwrite it.
	 *
	 * @param damage what is wrong with the record, for the log and for operators
	 * @param laterFormat whether a newer version wrote it (a retry may reach it)
	 */
	record Damaged(String damage, boolean laterFormat) implements ClaimResult {

		/** A damaged record. */
		public Damaged(String damage) {
			this(damage, false);
		}

	}

}
