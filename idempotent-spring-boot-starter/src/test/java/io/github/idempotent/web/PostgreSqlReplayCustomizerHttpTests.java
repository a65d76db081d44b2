package io.github.idempotent.web;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

/**
 * Replay customizers on Spring MVC with the JDBC store on PostgreSQL.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=jdbc", "idempotent.store.jdbc.initialize-schema=always",
				"spring.datasource.username=postgres", "spring.datasource.password=" })
@RequiresDatabase(Database.POSTGRESQL)
class PostgreSqlReplayCustomizerHttpTests extends AbstractReplayCustomizerHttpTests {

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		registry.add("spring.datasource.url", TestDatabases::postgresqlUrl);
		registry.add("idempotent.store.jdbc.table-name", () -> TestDatabases.uniqueTableName("replay_hook"));
	}

	@Override
	protected boolean recorded(String endpoint) {
		return true;
	}

}
