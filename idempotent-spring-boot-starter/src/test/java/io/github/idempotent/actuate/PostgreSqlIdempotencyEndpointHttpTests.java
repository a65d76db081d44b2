package io.github.idempotent.actuate;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

/**
 * The endpoint on the JDBC store and PostgreSQL: the listing is a query on the index of
 * the rows in progress.
 */
@SpringBootTest(classes = ActuatorTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=health,idempotency",
				"management.endpoint.idempotency.access=unrestricted", "idempotent.store.type=jdbc",
				"idempotent.store.jdbc.initialize-schema=always", "spring.datasource.username=postgres",
				"spring.datasource.password=" })
@RequiresDatabase(Database.POSTGRESQL)
class PostgreSqlIdempotencyEndpointHttpTests extends AbstractIdempotencyEndpointHttpTests {

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		registry.add("spring.datasource.url", TestDatabases::postgresqlUrl);
		registry.add("idempotent.store.jdbc.table-name", () -> TestDatabases.uniqueTableName("endpoint_http"));
	}

}
