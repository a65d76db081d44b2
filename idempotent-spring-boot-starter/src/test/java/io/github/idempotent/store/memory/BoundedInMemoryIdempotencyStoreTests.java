package io.github.idempotent.store.memory;

import io.github.idempotent.store.AbstractIdempotencyStoreContractTest;
import io.github.idempotent.store.IdempotencyStore;

/**
 * The contract under a bound that the busiest test, the claim storm with five live keys,
 * reaches exactly: a record count that drifted on release, completion or take-over would
 * refuse a claim here.
 */
class BoundedInMemoryIdempotencyStoreTests extends AbstractIdempotencyStoreContractTest {

	@Override
	protected IdempotencyStore createStore() {
		return new InMemoryIdempotencyStore(5);
	}

}
