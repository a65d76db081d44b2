package io.github.idempotent.web;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

/**
 * Exact replays on WebFlux with the JDBC store on PostgreSQL.
 */
@SpringBootTest(classes = WebFluxTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "idempotent.store.type=jdbc",
				"idempotent.store.jdbc.initialize-schema=always", "spring.datasource.username=postgres",
				"spring.datasource.password=" })
@RequiresDatabase(Database.POSTGRESQL)
class PostgreSqlWebFluxExactReplayTests extends AbstractWebFluxExactReplayTests {

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		registry.add("spring.datasource.url", TestDatabases::postgresqlUrl);
		registry.add("idempotent.store.jdbc.table-name", () -> TestDatabases.uniqueTableName("webflux_exact"));
	}

}
