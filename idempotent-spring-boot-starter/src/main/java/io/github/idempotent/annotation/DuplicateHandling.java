package io.github.idempotent.annotation;

/**
 * What a call does when its key has already completed.
 */
public enum DuplicateHandling {

	/**
	 * Return the stored outcome without running the method: the caller gets what the
	 * first caller got. The default, and the only choice for an HTTP endpoint, whose
	 * client needs the response.
	 */
	REPLAY,

	/**
	 * Neither run the method nor decode the stored outcome: the call returns
	 * {@code null}. For a message listener, which acknowledges the duplicate; counted
	 * apart from replays.
	 */
	SKIP,

	/**
	 * Run the method again, flagged as a duplicate
	 * ({@link io.github.idempotent.core.IdempotencyContext#isDuplicate()}), and return
	 * what it returns; its outcome is not stored and the stored one stays. For a consumer
	 * that decides itself what a duplicate means (log it, compare it, answer it).
	 */
	FLAG

}
