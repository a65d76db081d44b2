package io.github.idempotent.autoconfigure;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * In-memory store, under {@code idempotent.store.memory}.
 *
 * @param maximumRecords Most records the in-memory store holds; when full, new keys are
 * refused.
 * @param maximumSize Estimated heap the in-memory store's records may take; then new keys
 * are refused.
 * @param maximumSizePerScope Heap the records of one scope may take; unset for no quota.
 */
public record IdempotentMemoryProperties(@DefaultValue("100000") int maximumRecords,
		@DefaultValue("100MB") DataSize maximumSize, @Nullable DataSize maximumSizePerScope) {

}
