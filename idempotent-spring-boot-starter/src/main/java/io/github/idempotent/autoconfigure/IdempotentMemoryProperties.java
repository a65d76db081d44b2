package io.github.idempotent.autoconfigure;

import org.jspecify.annotations.Nullable;

import org.springframework.util.unit.DataSize;

/** In-memory store, under {@code idempotent.store.memory}. */
public class IdempotentMemoryProperties {

	// A literal: the metadata processor reads only literals.
	/** Most records the in-memory store holds; when full, new keys are refused. */
	private int maximumRecords = 100_000;

	/**
	 * Estimated heap the in-memory store's records may take; then new keys are refused.
	 */
	private DataSize maximumSize = DataSize.ofMegabytes(100);

	/** Heap the records of one scope may take; unset for no quota. */
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
