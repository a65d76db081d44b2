package io.github.idempotent.store.jdbc;

import com.zaxxer.hikari.HikariDataSource;

import io.github.idempotent.testsupport.TestDatabases;

class H2ShippedMigrationsTests extends AbstractShippedMigrationsTests {

	@Override
	protected HikariDataSource connect() {
		return TestDatabases.h2();
	}

	@Override
	protected JdbcDialect dialect() {
		return JdbcDialect.H2;
	}

	@Override
	protected String urlOf(String serverUrl, String schema) {
		return serverUrl + ";SCHEMA=" + schema;
	}

	@Override
	protected String createSchema(String schema) {
		return "CREATE SCHEMA " + schema;
	}

	@Override
	protected String dropSchema(String schema) {
		return "DROP SCHEMA " + schema + " CASCADE";
	}

}
