package io.github.idempotent.store.jdbc;

import com.zaxxer.hikari.HikariDataSource;

import io.github.idempotent.testsupport.TestDatabases;

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
