package io.github.idempotent.web;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.store.jdbc.JdbcDialect;
import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;
import io.github.idempotent.web.WebTestApplication.Executions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The JDBC store's table dropped while the application runs (a migration gone wrong, an
 * operator's mistake): the store is unavailable, as if its database were down, until the
 * table is back.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=jdbc", "idempotent.store.jdbc.initialize-schema=always",
				"idempotent.retry-after=3s", "spring.datasource.username=postgres", "spring.datasource.password=" })
@RequiresDatabase(Database.POSTGRESQL)
class PostgreSqlMissingTableHttpTests {

	private static final String TABLE = TestDatabases.uniqueTableName("missing_http");

	private static final String PAYMENT = "{\"orderNo\":\"M-1\",\"amount\":5}";

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		registry.add("spring.datasource.url", TestDatabases::postgresqlUrl);
		registry.add("idempotent.store.jdbc.table-name", () -> TABLE);
	}

	@LocalServerPort
	private int port;

	@Autowired
	private Executions executions;

	@Autowired
	private DataSource dataSource;

	@Test
	void aDroppedTableIsTheStoreUnavailableUntilItIsBack() throws Exception {
		HttpClientSupport http = new HttpClientSupport(this.port);
		assertThat(http.post("/payments", UUID.randomUUID().toString(), PAYMENT).statusCode()).isEqualTo(201);
		int executionsBefore = this.executions.count("payments");
		JdbcTemplate jdbc = new JdbcTemplate(this.dataSource);
		jdbc.execute("DROP TABLE " + TABLE);
		try {
			HttpResponse<String> during = http.post("/payments", UUID.randomUUID().toString(), PAYMENT);
			assertThat(during.statusCode()).isEqualTo(503);
			assertThat(during.headers().firstValue("Retry-After")).hasValue("3");
			assertThat(during.headers().firstValue("Content-Type")).hasValue("application/problem+json");
			assertThat(during.body()).contains("retry later with the same key").doesNotContain(TABLE);
			assertThat(this.executions.count("payments")).as("payments made").isEqualTo(executionsBefore);
		}
		finally {
			new ResourceDatabasePopulator(
					new ByteArrayResource(JdbcDialect.POSTGRESQL.schema(TABLE).getBytes(StandardCharsets.UTF_8)))
				.execute(this.dataSource);
		}
		assertThat(http.post("/payments", UUID.randomUUID().toString(), PAYMENT).statusCode())
			.as("once the table is back")
			.isEqualTo(201);
	}

}
