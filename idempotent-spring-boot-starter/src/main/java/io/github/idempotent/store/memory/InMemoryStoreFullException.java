package io.github.idempotent.store.memory;

/**
 * The {@link InMemoryIdempotencyStore} holds its maximum number of records, all of them
 * live, and refuses to claim a new key. Like any exception from a store, the executor
 * treats it as the store being unavailable, so {@code idempotent.failure-mode} decides:
 * refuse the call (503) or run it unprotected.
 */
public class InMemoryStoreFullException extends RuntimeException {

	private final int maximumRecords;

	public InMemoryStoreFullException(int maximumRecords) {
		super("In-memory idempotency store is full: it holds its maximum of " + maximumRecords
				+ " records, all in progress or within their ttl, and evicting one would let a retry of its key "
				+ "run again. Raise idempotent.store.memory.maximum-records, shorten the ttl, "
				+ "or use the Redis or JDBC store");
		this.maximumRecords = maximumRecords;
	}

	public int getMaximumRecords() {
		return this.maximumRecords;
	}

}
