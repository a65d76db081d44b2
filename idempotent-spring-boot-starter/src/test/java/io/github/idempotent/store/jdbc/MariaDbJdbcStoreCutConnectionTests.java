package io.github.idempotent.store.jdbc;

import com.zaxxer.hikari.HikariDataSource;

import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

@RequiresDatabase(Database.MARIADB)
class MariaDbJdbcStoreCutConnectionTests extends AbstractJdbcStoreCutConnectionTests {

	@Override
	protected HikariDataSource createDataSource() {
		return TestDatabases.mariadb();
	}

	@Override
	protected String url() {
		return TestDatabases.mariadbUrl();
	}

	@Override
	protected JdbcDialect dialect() {
		return JdbcDialect.MYSQL;
	}

}
