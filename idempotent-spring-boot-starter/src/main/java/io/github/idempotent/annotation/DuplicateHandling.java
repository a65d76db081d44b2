package io.github.idempotent.annotation;

/** What a call does when its key has already completed. */
public enum DuplicateHandling {

	/** Return the stored outcome without running the method; the only choice on HTTP. */
	REPLAY,

	/**
	 * Neither run the method nor decode the stored outcome: return {@code null} (a
	 * listener acknowledges).
	 */
	SKIP,

	/**
	 * Run the method again, flagged as a duplicate
	 * ({@link io.github.idempotent.core.IdempotencyContext#isDuplicate()}); its outcome
	 * is not stored.
	 */
	FLAG

}
