package io.github.idempotent.store.memory;

import io.github.idempotent.store.AbstractInspectableIdempotencyStoreContractTest;
import io.github.idempotent.store.IdempotencyStore;

class InMemoryIdempotencyStoreTests extends AbstractInspectableIdempotencyStoreContractTest {

	@Override
	protected IdempotencyStore createStore() {
		return new InMemoryIdempotencyStore();
	}

}
