package io.github.idempotent.web;

import java.sql.Connection;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.params.provider.Arguments;

import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

/**
 * The refusals of MariaDB: the pool at each isolation level (REPEATABLE READ is also
 * InnoDB's own default); {@code innodb_lock_wait_timeout} and {@code max_statement_time}
 * of a claim that inserts first ({@code claim-reads-first=false}: reading first, a
 * duplicate never waits for a lock); a full table (error 1114).
 */
@RequiresDatabase(Database.MARIADB)
class MariaDbRefusalHttpTests extends AbstractJdbcRefusalHttpTests {

	@Override
	protected String url() {
		return TestDatabases.mariadbUrl();
	}

	@Override
	protected List<String> datasource(String url) {
		return List.of("spring.datasource.url=" + url, "spring.datasource.username=root",
				"spring.datasource.password=");
	}

	@Override
	protected Stream<Isolation> isolations() {
		return Stream.of(Isolation.pool("READ_COMMITTED", Connection.TRANSACTION_READ_COMMITTED),
				Isolation.pool("REPEATABLE_READ", Connection.TRANSACTION_REPEATABLE_READ),
				Isolation.pool("SERIALIZABLE", Connection.TRANSACTION_SERIALIZABLE));
	}

	@Override
	protected Stream<Arguments> timeouts() {
		return Stream.of(
				Arguments.of("innodb_lock_wait_timeout",
						List.of("spring.datasource.hikari.connection-init-sql=SET SESSION innodb_lock_wait_timeout = 1",
								"idempotent.store.jdbc.claim-reads-first=false")),
				Arguments.of("max_statement_time",
						List.of("spring.datasource.hikari.connection-init-sql=SET SESSION max_statement_time = 0.5",
								"idempotent.store.jdbc.claim-reads-first=false")));
	}

	@Override
	protected List<String> fill(String table) {
		return List.of("CREATE TRIGGER " + table + "_full BEFORE INSERT ON " + table
				+ " FOR EACH ROW SIGNAL SQLSTATE 'HY000' SET MYSQL_ERRNO = 1114, MESSAGE_TEXT = 'The table ''" + table
				+ "'' is full'");
	}

	@Override
	protected List<String> unfill(String table) {
		return List.of("DROP TRIGGER IF EXISTS " + table + "_full");
	}

}
