package io.github.idempotent.core;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.jdbc.JdbcIdempotencyStore;
import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

/**
 * {@link io.github.idempotent.core.IdempotencyTemplate} on the JDBC store, PostgreSQL.
 */
@RequiresDatabase(Database.POSTGRESQL)
class PostgreSqlIdempotencyTemplateTests extends AbstractIdempotencyTemplateTests {

	private static final String TABLE = TestDatabases.uniqueTableName("template");

	private static HikariDataSource postgresql;

	@BeforeAll
	static void connect() {
		postgresql = TestDatabases.postgresql();
	}

	@AfterAll
	static void dropTable() {
		try (HikariDataSource dataSource = postgresql) {
			new JdbcTemplate(dataSource).execute("DROP TABLE IF EXISTS " + TABLE);
		}
	}

	@Override
	protected ApplicationContextRunner runner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, DataSourceAutoConfiguration.class,
					IdempotentAutoConfiguration.class))
			// Not closed with each context: the tests share one pool.
			.withBean(DataSource.class, () -> new DelegatingDataSource(postgresql))
			.withPropertyValues("idempotent.default-scope=global", "idempotent.store.type=jdbc",
					"idempotent.store.jdbc.table-name=" + TABLE, "idempotent.store.jdbc.initialize-schema=always");
	}

	@Override
	protected Class<? extends IdempotencyStore> storeType() {
		return JdbcIdempotencyStore.class;
	}

}
