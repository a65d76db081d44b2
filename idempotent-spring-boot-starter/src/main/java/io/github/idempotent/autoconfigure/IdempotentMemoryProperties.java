package io.github.idempotent.autoconfigure;

import org.jspecify.annotations.Nullable;

import org.springframework.util.unit.DataSize;

/**
 * In-memory store, under {@code idempotent.store.memory}.
 */
public class IdempotentMemoryProperties {

	// A literal, not InMemoryIdempotencyStore.DEFAULT_MAXIMUM_RECORDS: the metadata
	// processor reads only literals, and IDEs show the default from the metadata.
	/**
	 * Largest number of records the in-memory store holds, besides maximum-size. When it
	 * is full and none has expired, new keys are refused (503, in every failure-mode)
	 * rather than a live record evicted.
	 */
	private int maximumRecords = 100_000;

	/**
	 * Heap the in-memory store's records may take, estimated from their keys and results.
	 * When it is full and none has expired, new keys are refused (503, in every
	 * failure-mode) rather than a live record evicted.
	 */
	private DataSize maximumSize = DataSize.ofMegabytes(100);

	/**
	 * Heap the records of one scope (one user, under the principal scope) may take, so
	 * that one client cannot fill the store for everyone. Unset for no quota; the global
	 * scope counts as one client.
	 */
	private @Nullable DataSize maximumSizePerScope;

	public int getMaximumRecords() {
		return this.maximumRecords;
	}

	public void setMaximumRecords(int maximumRecords) {
		this.maximumRecords = maximumRecords;
	}

	public DataSize getMaximumSize() {
		return this.maximumSize;
	}

	public void setMaximumSize(DataSize maximumSize) {
		this.maximumSize = maximumSize;
	}

	public @Nullable DataSize getMaximumSizePerScope() {
		return this.maximumSizePerScope;
	}

	public void setMaximumSizePerScope(@Nullable DataSize maximumSizePerScope) {
		this.maximumSizePerScope = maximumSizePerScope;
	}

}
