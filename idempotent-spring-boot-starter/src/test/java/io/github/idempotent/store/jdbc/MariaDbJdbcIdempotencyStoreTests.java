package io.github.idempotent.store.jdbc;

import com.zaxxer.hikari.HikariDataSource;

import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

@RequiresDatabase(Database.MARIADB)
class MariaDbJdbcIdempotencyStoreTests extends AbstractJdbcIdempotencyStoreTests {

	@Override
	protected HikariDataSource createDataSource() {
		return TestDatabases.mariadb();
	}

	@Override
	protected JdbcDialect expectedDialect() {
		return JdbcDialect.MYSQL;
	}

}
