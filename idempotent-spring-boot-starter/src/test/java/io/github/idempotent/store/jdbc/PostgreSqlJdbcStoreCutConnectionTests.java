package io.github.idempotent.store.jdbc;

import com.zaxxer.hikari.HikariDataSource;

import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

@RequiresDatabase(Database.POSTGRESQL)
class PostgreSqlJdbcStoreCutConnectionTests extends AbstractJdbcStoreCutConnectionTests {

	@Override
	protected HikariDataSource createDataSource() {
		return TestDatabases.postgresql();
	}

	@Override
	protected String url() {
		return TestDatabases.postgresqlUrl();
	}

	@Override
	protected JdbcDialect dialect() {
		return JdbcDialect.POSTGRESQL;
	}

	@Override
	protected String urlParameters() {
		// Never a server-side prepared statement, which is executed without its text.
		return "?prepareThreshold=0";
	}

}
