package io.github.idempotent.core;

/**
 * What to do when the store cannot be reached. A store that answers but has no room for a
 * key is not unreachable: its call is refused in both modes
 * ({@link IdempotencyStoreFullException}).
 */
public enum FailureMode {

	/**
	 * Refuse the call with {@link IdempotencyStoreUnavailableException}; the method does
	 * not run. Safe for operations that must never run twice.
	 */
	CLOSED,

	/**
	 * Run the method unprotected, log and count the bypass. Keeps the service up at the
	 * price of possible duplicates while the store is down.
	 */
	OPEN

}
