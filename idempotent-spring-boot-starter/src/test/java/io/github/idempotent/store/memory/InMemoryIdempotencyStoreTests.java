package io.github.idempotent.store.memory;

import io.github.idempotent.store.AbstractIdempotencyStoreContractTest;
import io.github.idempotent.store.IdempotencyStore;

class InMemoryIdempotencyStoreTests extends AbstractIdempotencyStoreContractTest {

	@Override
	protected IdempotencyStore createStore() {
		return new InMemoryIdempotencyStore();
	}

}
