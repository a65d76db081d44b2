package io.github.idempotent.store.jdbc;

import java.util.List;

import com.zaxxer.hikari.HikariDataSource;

import io.github.idempotent.testsupport.TestDatabases;

class H2JoinTransactionIsolationTests extends AbstractJoinTransactionIsolationTests {

	@Override
	protected HikariDataSource createDataSource() {
		return TestDatabases.h2();
	}

	@Override
	protected JdbcDialect dialect() {
		return JdbcDialect.H2;
	}

	@Override
	protected List<Integer> isolationLevels() {
		return levels(DEFAULT, READ_COMMITTED, REPEATABLE_READ, SERIALIZABLE);
	}

}
