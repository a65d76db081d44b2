package io.github.idempotent.store.jdbc;

import java.util.List;

import com.zaxxer.hikari.HikariDataSource;

import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

@RequiresDatabase(Database.MARIADB)
class MariaDbJoinTransactionIsolationTests extends AbstractJoinTransactionIsolationTests {

	@Override
	protected HikariDataSource createDataSource() {
		return TestDatabases.mariadb();
	}

	@Override
	protected JdbcDialect dialect() {
		return JdbcDialect.MYSQL;
	}

	@Override
	protected List<Integer> isolationLevels() {
		return levels(DEFAULT, READ_UNCOMMITTED, READ_COMMITTED, REPEATABLE_READ, SERIALIZABLE);
	}

}
