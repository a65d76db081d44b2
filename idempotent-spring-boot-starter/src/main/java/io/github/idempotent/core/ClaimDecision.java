package io.github.idempotent.core;

import org.jspecify.annotations.Nullable;

import io.github.idempotent.store.ClaimResult;

/**
 * What a call does with the answer to its claim, as {@link IdempotencyProtocol#decide}
 * decides it; each adapter carries it out in its own way (on the calling thread, or on
 * completion signals). A refusal is not a decision: it is thrown.
 */
sealed interface ClaimDecision {

	/**
	 * The call owns the key: run the method, then complete or release through
	 * {@code owner}.
	 */
	record Run(OwnerHandle owner, ClaimResult.Acquired acquired) implements ClaimDecision {
	}

	/**
	 * A completed duplicate's answer: its stored outcome, or {@code null} when skipped.
	 */
	record Answer(@Nullable Object value) implements ClaimDecision {
	}

	/** A flagged duplicate: run the method with this context bound, storing nothing. */
	record RunAsDuplicate(IdempotencyContext context) implements ClaimDecision {
	}

	/** A duplicate still in progress: claim again after this many milliseconds. */
	record Wait(long millis) implements ClaimDecision {
	}

}
