package io.github.idempotent.store.jdbc;

import com.zaxxer.hikari.HikariDataSource;

import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

@RequiresDatabase(Database.POSTGRESQL)
class PostgreSqlShippedMigrationsTests extends AbstractShippedMigrationsTests {

	@Override
	protected HikariDataSource connect() {
		return TestDatabases.postgresql();
	}

	@Override
	protected JdbcDialect dialect() {
		return JdbcDialect.POSTGRESQL;
	}

	@Override
	protected String urlOf(String serverUrl, String schema) {
		return serverUrl + (serverUrl.contains("?") ? "&" : "?") + "currentSchema=" + schema;
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
