package io.github.idempotent.store.cache;

import java.time.Duration;

import org.springframework.util.unit.DataSize;

import io.github.idempotent.store.AbstractInspectableIdempotencyStoreContractTest;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;

/**
 * The local cache in front of a store keeps the store's contract.
 */
class CachingIdempotencyStoreContractTests extends AbstractInspectableIdempotencyStoreContractTest {

	@Override
	protected IdempotencyStore createStore() {
		return new CachingIdempotencyStore(new InMemoryIdempotencyStore(), DataSize.ofMegabytes(1),
				Duration.ofMinutes(1));
	}

}
