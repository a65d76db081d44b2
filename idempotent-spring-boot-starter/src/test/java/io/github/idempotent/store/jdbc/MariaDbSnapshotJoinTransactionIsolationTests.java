package io.github.idempotent.store.jdbc;

import java.util.List;

import com.zaxxer.hikari.HikariDataSource;

import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

/**
 * MariaDB with {@code innodb_snapshot_isolation=ON} (the default from MariaDB 11.6.2): a
 * locking read of a row changed after the transaction's snapshot fails with "Record has
 * changed since last read" and rolls back the whole transaction, savepoints included.
 */
@RequiresDatabase(Database.MARIADB)
class MariaDbSnapshotJoinTransactionIsolationTests extends AbstractJoinTransactionIsolationTests {

	@Override
	protected HikariDataSource createDataSource() {
		HikariDataSource dataSource = new HikariDataSource();
		dataSource.setJdbcUrl(TestDatabases.mariadbUrl());
		dataSource.setUsername("root");
		dataSource.setPassword("");
		dataSource.setMaximumPoolSize(16);
		dataSource.setConnectionInitSql("SET SESSION innodb_snapshot_isolation = ON");
		return dataSource;
	}

	@Override
	protected JdbcDialect dialect() {
		return JdbcDialect.MYSQL;
	}

	@Override
	protected List<Integer> isolationLevels() {
		return levels(DEFAULT, REPEATABLE_READ, SERIALIZABLE);
	}

}
