package io.github.idempotent.store.jdbc;

import com.zaxxer.hikari.HikariDataSource;

import io.github.idempotent.testsupport.TestDatabases;

class H2JdbcIdempotencyStoreTests extends AbstractJdbcIdempotencyStoreTests {

	@Override
	protected HikariDataSource createDataSource() {
		return TestDatabases.h2();
	}

	@Override
	protected JdbcDialect expectedDialect() {
		return JdbcDialect.H2;
	}

}
