package io.github.idempotent.web;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.AbstractFinalOutcomeTests;
import io.github.idempotent.testsupport.FinalOutcomesController;
import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

/**
 * Final and released outcomes on Spring MVC with the JDBC store on PostgreSQL.
 */
@SpringBootTest(classes = { WebTestApplication.class, FinalOutcomesController.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=jdbc", "idempotent.store.jdbc.initialize-schema=always",
				"spring.datasource.username=postgres", "spring.datasource.password=" })
@RequiresDatabase(Database.POSTGRESQL)
class PostgreSqlFinalOutcomeHttpTests extends AbstractFinalOutcomeTests {

	private static final String TABLE = TestDatabases.uniqueTableName("outcomes_http");

	@Autowired
	private JdbcTemplate jdbc;

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		registry.add("spring.datasource.url", TestDatabases::postgresqlUrl);
		registry.add("idempotent.store.jdbc.table-name", () -> TABLE);
	}

	@Override
	protected long records(String clientKey) {
		Long count = this.jdbc.queryForObject("SELECT count(*) FROM " + TABLE + " WHERE idempotency_key LIKE ?",
				Long.class, "%:" + clientKey);
		return (count != null) ? count : 0;
	}

}
