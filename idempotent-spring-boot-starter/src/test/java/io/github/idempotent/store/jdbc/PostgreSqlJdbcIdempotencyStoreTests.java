package io.github.idempotent.store.jdbc;

import com.zaxxer.hikari.HikariDataSource;

import io.github.idempotent.testsupport.TestDatabases;

class PostgreSqlJdbcIdempotencyStoreTests extends AbstractJdbcIdempotencyStoreTests {

	@Override
	protected HikariDataSource createDataSource() {
		return TestDatabases.postgresql();
	}

	@Override
	protected JdbcDialect expectedDialect() {
		return JdbcDialect.POSTGRESQL;
	}

}
