package io.github.idempotent.store.jdbc;

import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;

/**
 * The store's contract on MariaDB with {@code claim-reads-first} off: a claim is the
 * INSERT, then a {@code SELECT} only when it found the row.
 */
@RequiresDatabase(Database.MARIADB)
class MariaDbInsertFirstJdbcIdempotencyStoreTests extends MariaDbJdbcIdempotencyStoreTests {

	@Override
	protected IdempotencyStore createStore() {
		JdbcIdempotencyStore store = (JdbcIdempotencyStore) super.createStore();
		store.setClaimReadsFirst(false);
		return store;
	}

	@Override
	protected boolean duplicateWaitsForAnOpenTransaction() {
		return true;
	}

}
