package io.github.idempotent.core;

/**
 * What to do when the store cannot be reached; a full store refuses the call in both
 * modes.
 */
public enum FailureMode {

	/** Refuse the call with {@link IdempotencyStoreUnavailableException}. */
	CLOSED,

	/** Run the method unprotected, at the price of possible duplicates. */
	OPEN

}
