package io.github.idempotent.web;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.params.provider.Arguments;

import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

/**
 * The refusals of PostgreSQL: serialization failures of concurrent first claims at
 * REPEATABLE READ and SERIALIZABLE, set on the pool (Hikari's
 * {@code transaction-isolation}) or as the connections' own default (what
 * {@code ALTER DATABASE ... SET default_transaction_isolation} gives, here per
 * connection: the test must not change the shared server); {@code lock_timeout} and
 * {@code statement_timeout}; a full disk (SQL state 53100).
 */
@RequiresDatabase(Database.POSTGRESQL)
class PostgreSqlRefusalHttpTests extends AbstractJdbcRefusalHttpTests {

	@Override
	protected String url() {
		return TestDatabases.postgresqlUrl();
	}

	@Override
	protected List<String> datasource(String url) {
		return List.of("spring.datasource.url=" + url, "spring.datasource.username=postgres",
				"spring.datasource.password=");
	}

	@Override
	protected Stream<Isolation> isolations() {
		return Stream.of(Isolation.pool("READ_COMMITTED", Connection.TRANSACTION_READ_COMMITTED),
				Isolation.pool("REPEATABLE_READ", Connection.TRANSACTION_REPEATABLE_READ),
				Isolation.pool("SERIALIZABLE", Connection.TRANSACTION_SERIALIZABLE),
				byDefault("repeatable read", Connection.TRANSACTION_REPEATABLE_READ),
				byDefault("serializable", Connection.TRANSACTION_SERIALIZABLE));
	}

	private static Isolation byDefault(String level, int value) {
		// A space in a server option is escaped with a backslash.
		String option = "-c default_transaction_isolation=" + level.replace(" ", "\\ ");
		return new Isolation("default_transaction_isolation " + level, value,
				"options=" + URLEncoder.encode(option, StandardCharsets.UTF_8), List.of());
	}

	@Override
	protected Stream<Arguments> timeouts() {
		return Stream.of(
				Arguments.of("lock_timeout",
						List.of("spring.datasource.hikari.connection-init-sql=SET lock_timeout = '500ms'")),
				Arguments.of("statement_timeout",
						List.of("spring.datasource.hikari.connection-init-sql=SET statement_timeout = '500ms'")));
	}

	@Override
	protected List<String> fill(String table) {
		return List.of("""
				CREATE FUNCTION %1$s_full() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
				RAISE EXCEPTION 'could not extend file "base/1/%1$s": No space left on device'
				USING ERRCODE = 'disk_full'; END $$""".formatted(table),
				"CREATE TRIGGER %1$s_full BEFORE INSERT ON %1$s FOR EACH ROW EXECUTE FUNCTION %1$s_full()"
					.formatted(table));
	}

	@Override
	protected List<String> unfill(String table) {
		return List.of("DROP TRIGGER IF EXISTS %1$s_full ON %1$s".formatted(table),
				"DROP FUNCTION IF EXISTS %1$s_full()".formatted(table));
	}

}
