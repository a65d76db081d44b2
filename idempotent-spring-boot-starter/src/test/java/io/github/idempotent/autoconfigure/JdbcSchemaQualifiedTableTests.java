package io.github.idempotent.autoconfigure;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import io.github.idempotent.core.IdempotencyTemplate;
import io.github.idempotent.store.jdbc.JdbcIdempotencyStore;
import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The table name docs/stores.md gives as its example,
 * {@code payments.idempotency_record}: the shipped table name in a schema of the
 * application's, created by the starter ({@code initialize-schema=always}) and used by a
 * guarded call, on every database.
 */
class JdbcSchemaQualifiedTableTests {

	@Test
	void h2() {
		try (HikariDataSource h2 = TestDatabases.h2()) {
			String schema = TestDatabases.uniqueTableName("payments");
			new JdbcTemplate(h2).execute("CREATE SCHEMA " + schema);
			startAndCallTwice(h2, schema);
		}
	}

	@Test
	@RequiresDatabase(Database.POSTGRESQL)
	void postgresql() {
		try (HikariDataSource postgresql = TestDatabases.postgresql()) {
			String schema = TestDatabases.uniqueTableName("payments");
			JdbcTemplate jdbc = new JdbcTemplate(postgresql);
			jdbc.execute("CREATE SCHEMA " + schema);
			try {
				startAndCallTwice(postgresql, schema);
			}
			finally {
				jdbc.execute("DROP SCHEMA " + schema + " CASCADE");
			}
		}
	}

	@Test
	@RequiresDatabase(Database.MARIADB)
	void mariadb() {
		try (HikariDataSource mariadb = TestDatabases.mariadb()) {
			// A schema is a database on MariaDB and MySQL.
			String schema = TestDatabases.uniqueTableName("payments");
			JdbcTemplate jdbc = new JdbcTemplate(mariadb);
			jdbc.execute("CREATE DATABASE " + schema);
			try {
				startAndCallTwice(mariadb, schema);
			}
			finally {
				jdbc.execute("DROP DATABASE " + schema);
			}
		}
	}

	private static void startAndCallTwice(DataSource database, String schema) {
		String table = schema + "." + JdbcIdempotencyStore.DEFAULT_TABLE_NAME;
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, DataSourceAutoConfiguration.class,
					IdempotentAutoConfiguration.class))
			// Not the pool itself: the context would close it before the schema is
			// dropped.
			.withBean(DataSource.class, () -> new DelegatingDataSource(database))
			.withPropertyValues("idempotent.store.type=jdbc", "idempotent.store.jdbc.table-name=" + table,
					"idempotent.store.jdbc.initialize-schema=always", "idempotent.default-scope=global")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
				AtomicInteger runs = new AtomicInteger();
				Supplier<String> charge = () -> template.operation("payments")
					.key("order-1")
					.execute(String.class, () -> "receipt-" + runs.incrementAndGet());
				assertThat(charge.get()).isEqualTo("receipt-1");
				assertThat(charge.get()).as("replayed").isEqualTo("receipt-1");
				assertThat(runs).hasValue(1);
				assertThat(new JdbcTemplate(database).queryForObject("SELECT COUNT(*) FROM " + table, Integer.class))
					.isOne();
			});
	}

}
