package io.github.idempotent.store.jdbc;

import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.aop.IdempotentAnnotationAutoConfiguration;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A pool whose connections are not in autocommit mode ({@code auto-commit: false}, a
 * common setting with JPA): a call outside any transaction still commits its claim and
 * its result, so a retry replays instead of running the method again.
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

	private void retryReplays(Supplier<HikariDataSource> pools, String url, String user, JdbcDialect dialect) {
		String table = TestDatabases.uniqueTableName("idem_nac");
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
				new ApplicationContextRunner()
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
						assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + table, Integer.class))
							.as("records committed")
							.isOne();
						assertThat(payments.pay(paymentNo)).isEqualTo("paid " + paymentNo);
						assertThat(payments.executions()).as("executions").isOne();
					});
			}
			finally {
				jdbc.execute("DROP TABLE IF EXISTS " + table);
			}
		}
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
