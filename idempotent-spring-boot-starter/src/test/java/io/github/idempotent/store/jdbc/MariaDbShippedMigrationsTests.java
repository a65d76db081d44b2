package io.github.idempotent.store.jdbc;

import com.zaxxer.hikari.HikariDataSource;

import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

/**
 * On MariaDB a schema is a database, which the test's user creates.
 */
@RequiresDatabase(Database.MARIADB)
class MariaDbShippedMigrationsTests extends AbstractShippedMigrationsTests {

	@Override
	protected HikariDataSource connect() {
		return TestDatabases.mariadb();
	}

	@Override
	protected JdbcDialect dialect() {
		return JdbcDialect.MYSQL;
	}

	@Override
	protected String urlOf(String serverUrl, String schema) {
		return serverUrl.replaceFirst("^(jdbc:[a-z]+://[^/]+/)[^?]*", "$1" + schema);
	}

	@Override
	protected String createSchema(String schema) {
		return "CREATE DATABASE " + schema;
	}

	@Override
	protected String dropSchema(String schema) {
		return "DROP DATABASE " + schema;
	}

}
