package io.github.idempotent.core;

import org.jspecify.annotations.Nullable;

import io.github.idempotent.store.ClaimResult;

/**
 * What a call does with the answer to its claim ({@link IdempotencyProtocol#decide}); a
 * refusal is thrown instead.
 */
sealed interface ClaimDecision {

	/** The call owns the key: run the method, then complete or release {@code owner}. */
	record Run(OwnerHandle owner, ClaimResult.Acquired acquired) implements ClaimDecision {
	}

	/** A completed duplicate's answer: its stored outcome, or {@code null} if skipped. */
	record Answer(@Nullable Object value) implements ClaimDecision {
	}

	/** A flagged duplicate: run the method with this context bound, storing nothing. */
	record RunAsDuplicate(IdempotencyContext context) implements ClaimDecision {
	}

	/** A duplicate still in progress: claim again after this many milliseconds. */
	record Wait(long millis) implements ClaimDecision {
	}

}
