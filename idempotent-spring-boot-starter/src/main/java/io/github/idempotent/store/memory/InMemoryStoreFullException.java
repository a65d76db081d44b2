package io.github.idempotent.store.memory;

import org.springframework.util.unit.DataSize;

import io.github.idempotent.store.StoreFullException;

/**
 * The {@link InMemoryIdempotencyStore}, or the records of the key's scope, hold their
 * maximum, all of them live, and a new key is refused.
 */
public class InMemoryStoreFullException extends StoreFullException {

	/**
	 * The whole store, of {@code maximumRecords} and estimated {@code maximumBytes}, is
	 * full.
	 */
	public InMemoryStoreFullException(int maximumRecords, long maximumBytes) {
		super("In-memory idempotency store is full: it holds its maximum of " + maximumRecords + " records or "
				+ DataSize.ofBytes(maximumBytes).toKilobytes() + " KB, all in progress or within their ttl, and "
				+ "evicting one would let a retry of its key run again. Raise idempotent.store.memory.maximum-size "
				+ "or idempotent.store.memory.maximum-records, shorten the ttl, or use the Redis or JDBC store");
	}

	/** The records of {@code scope} (as in record keys) hold their quota. */
	public InMemoryStoreFullException(String scope, long maximumBytesPerScope) {
		super("In-memory idempotency store is full for scope '" + scope + "': its records hold the quota of "
				+ DataSize.ofBytes(maximumBytesPerScope).toKilobytes() + " KB per scope "
				+ "(idempotent.store.memory.maximum-size-per-scope), all in progress or within their ttl. "
				+ "Other scopes are not refused");
	}

}
