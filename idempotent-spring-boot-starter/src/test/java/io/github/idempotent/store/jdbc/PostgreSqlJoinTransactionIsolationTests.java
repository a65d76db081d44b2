package io.github.idempotent.store.jdbc;

import java.util.List;

import com.zaxxer.hikari.HikariDataSource;

import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

@RequiresDatabase(Database.POSTGRESQL)
class PostgreSqlJoinTransactionIsolationTests extends AbstractJoinTransactionIsolationTests {

	@Override
	protected HikariDataSource createDataSource() {
		return TestDatabases.postgresql();
	}

	@Override
	protected JdbcDialect dialect() {
		return JdbcDialect.POSTGRESQL;
	}

	@Override
	protected List<Integer> isolationLevels() {
		return levels(DEFAULT, READ_COMMITTED, REPEATABLE_READ, SERIALIZABLE);
	}

}
