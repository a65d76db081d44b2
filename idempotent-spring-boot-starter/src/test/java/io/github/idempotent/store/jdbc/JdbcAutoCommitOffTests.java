package io.github.idempotent.store.jdbc;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.lookup.AbstractRoutingDataSource;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.IdempotentAnnotationAutoConfiguration;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A pool whose connections are not in autocommit mode ({@code auto-commit: false}, a
 * common setting with JPA): a call outside any transaction still commits its claim and
 * its result, so a retry replays instead of running the method again. So does a routing
 * DataSource whose pools differ: the mode is the connection's that the write uses.
 */
class JdbcAutoCommitOffTests {

	@Test
	@RequiresDatabase(Database.POSTGRESQL)
	void postgresqlRetryReplays() {
		retryReplays(TestDatabases::postgresql, TestDatabases.postgresqlUrl(), "postgres", JdbcDialect.POSTGRESQL);
	}

	@Test
	@RequiresDatabase(Database.MARIADB)
	void mariadbRetryReplays() {
		retryReplays(TestDatabases::mariadb, TestDatabases.mariadbUrl(), "root", JdbcDialect.MYSQL);
	}

	@Test
	@RequiresDatabase(Database.POSTGRESQL)
	void postgresqlRoutedWritesCommit() {
		routedWritesCommit(TestDatabases::postgresql, TestDatabases.postgresqlUrl(), "postgres",
				JdbcDialect.POSTGRESQL);
	}

	@Test
	@RequiresDatabase(Database.MARIADB)
	void mariadbRoutedWritesCommit() {
		routedWritesCommit(TestDatabases::mariadb, TestDatabases.mariadbUrl(), "root", JdbcDialect.MYSQL);
	}

	private void retryReplays(Supplier<HikariDataSource> pools, String url, String user, JdbcDialect dialect) {
		withTable(pools, url, user, dialect, "idem_nac",
				(setup, pool, table) -> new ApplicationContextRunner()
					.withConfiguration(AutoConfigurations.of(IdempotentAutoConfiguration.class,
							IdempotentAnnotationAutoConfiguration.class))
					.withBean(DataSource.class, () -> pool)
					.withBean(Payments.class)
					.withPropertyValues("idempotent.store.type=jdbc", "idempotent.store.jdbc.table-name=" + table,
							"idempotent.store.jdbc.initialize-schema=never", "idempotent.store.jdbc.purge-interval=0",
							"idempotent.default-scope=global")
					.run((context) -> {
						Payments payments = context.getBean(Payments.class);
						String paymentNo = UUID.randomUUID().toString();
						assertThat(payments.pay(paymentNo)).isEqualTo("paid " + paymentNo);
						assertThat(setup.queryForObject("SELECT COUNT(*) FROM " + table, Integer.class))
							.as("records committed")
							.isOne();
						assertThat(payments.pay(paymentNo)).isEqualTo("paid " + paymentNo);
						assertThat(payments.executions()).as("executions").isOne();
					}));
	}

	/**
	 * The store's first write goes to a pool that autocommits, the later ones to one that
	 * does not: they still commit.
	 */
	private void routedWritesCommit(Supplier<HikariDataSource> pools, String url, String user, JdbcDialect dialect) {
		withTable(pools, url, user, dialect, "idem_route", (setup, pool, table) -> {
			AtomicReference<String> target = new AtomicReference<>("on");
			AbstractRoutingDataSource routing = new AbstractRoutingDataSource() {
				@Override
				protected Object determineCurrentLookupKey() {
					return target.get();
				}
			};
			routing.setTargetDataSources(Map.of("on", setup.getDataSource(), "off", pool));
			routing.afterPropertiesSet();
			JdbcIdempotencyStore store = new JdbcIdempotencyStore(routing, table, dialect);
			Fingerprint fingerprint = new Fingerprint("fp");
			Duration lease = Duration.ofMinutes(1);
			assertThat(store.claim(new RecordKey("global:pay:" + UUID.randomUUID()), fingerprint, lease))
				.isInstanceOf(ClaimResult.Acquired.class);
			target.set("off");
			RecordKey key = new RecordKey("global:pay:" + UUID.randomUUID());
			ClaimResult.Acquired claim = (ClaimResult.Acquired) store.claim(key, fingerprint, lease);
			assertThat(store.complete(key, claim.token(), fingerprint, new StoredResult(new byte[] { 1 }), lease))
				.isTrue();
			assertThat(setup.queryForObject("SELECT COUNT(*) FROM " + table + " WHERE idempotency_key = ?",
					Integer.class, key.value()))
				.as("record committed on the pool that does not autocommit")
				.isOne();
			assertThat(store.claim(key, fingerprint, lease)).isInstanceOf(ClaimResult.Completed.class);
		});
	}

	/**
	 * Runs {@code test} with a table of its own, a pool that autocommits ({@code setup})
	 * and one that does not, on the same database.
	 */
	private void withTable(Supplier<HikariDataSource> pools, String url, String user, JdbcDialect dialect,
			String prefix, TableTest test) {
		String table = TestDatabases.uniqueTableName(prefix);
		try (HikariDataSource setup = pools.get(); HikariDataSource pool = new HikariDataSource()) {
			pool.setJdbcUrl(url);
			pool.setUsername(user);
			pool.setAutoCommit(false);
			JdbcTemplate jdbc = new JdbcTemplate(setup);
			for (String statement : dialect.schema(table).split(";")) {
				if (!statement.replaceAll("(?m)^--.*$", "").isBlank()) {
					jdbc.execute(statement);
				}
			}
			try {
				test.run(jdbc, pool, table);
			}
			finally {
				jdbc.execute("DROP TABLE IF EXISTS " + table);
			}
		}
	}

	interface TableTest {

		void run(JdbcTemplate setup, HikariDataSource notAutoCommitting, String table);

	}

	static class Payments {

		private final AtomicInteger executions = new AtomicInteger();

		int executions() {
			return this.executions.get();
		}

		@Idempotent(key = "#paymentNo", name = "payments")
		public String pay(String paymentNo) {
			this.executions.incrementAndGet();
			return "paid " + paymentNo;
		}

	}

}
