package io.github.idempotent.autoconfigure;

/**
 * In-memory store, under {@code idempotent.store.memory}.
 */
public class IdempotentMemoryProperties {

	// A literal, not InMemoryIdempotencyStore.DEFAULT_MAXIMUM_RECORDS: the metadata
	// processor reads only literals, and IDEs show the default from the metadata.
	/**
	 * Largest number of records the in-memory store holds. When it is full and none has
	 * expired, new keys are refused as if the store were down (see failure-mode) rather
	 * than a live record evicted.
	 */
	private int maximumRecords = 100_000;

	public int getMaximumRecords() {
		return this.maximumRecords;
	}

	public void setMaximumRecords(int maximumRecords) {
		this.maximumRecords = maximumRecords;
	}

}
