package io.github.idempotent.messaging.amqp;

import java.util.UUID;

import org.junit.jupiter.api.AfterAll;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

/**
 * {@link AbstractRabbitDuplicateHandlingTests} on the JDBC store, on PostgreSQL, in a
 * table of its own.
 */
@RequiresDatabase(Database.POSTGRESQL)
class PostgreSqlRabbitDuplicateHandlingTests extends AbstractRabbitDuplicateHandlingTests {

	static final String RUN = "pg-" + UUID.randomUUID().toString().substring(0, 8);

	static final String TABLE = TestDatabases.uniqueTableName("rabbit_duplicates");

	@DynamicPropertySource
	static void postgresql(DynamicPropertyRegistry registry) {
		registry.add("idempotent.store.type", () -> "jdbc");
		registry.add("spring.datasource.url", TestDatabases::postgresqlUrl);
		registry.add("spring.datasource.username", () -> "postgres");
		registry.add("spring.datasource.password", () -> "");
		registry.add("idempotent.store.jdbc.table-name", () -> TABLE);
		registry.add("idempotent.store.jdbc.initialize-schema", () -> "always");
		registry.add("idempotent.key-prefix", () -> "rabbit-dup-" + RUN);
		registry.add("test.run", () -> RUN);
	}

	@AfterAll
	static void dropTable() {
		try (var postgresql = TestDatabases.postgresql()) {
			new JdbcTemplate(postgresql).execute("DROP TABLE IF EXISTS " + TABLE);
		}
	}

}
