package smoketest.jdbc.flyway;

import java.net.http.HttpRequest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

import org.junit.jupiter.api.Test;
import smoketest.jdbc.flyway.SmokeApplication.PaymentController;
import smoketest.storm.HttpStorm;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
class JdbcFlywaySmokeTests {

	@LocalServerPort
	int port;

	@Autowired
	PaymentController payments;

	@Autowired
	JdbcClient jdbc;

	/**
	 * Starts the application on an empty schema of its own, as on its first deployment:
	 * Flyway creates every table, the idempotency table included (the test database
	 * holds other tests' tables, and a table left by an earlier run would hide a
	 * migration that did not run).
	 */
	@DynamicPropertySource
	static void anEmptySchema(DynamicPropertyRegistry registry) throws SQLException {
		String url = System.getenv().getOrDefault("IDEMPOTENT_POSTGRESQL_URL", "jdbc:postgresql://127.0.0.1:5432/test");
		try (Connection connection = DriverManager.getConnection(url, "postgres", "");
				Statement statement = connection.createStatement()) {
			statement.execute("DROP SCHEMA IF EXISTS smoke_flyway CASCADE");
			statement.execute("CREATE SCHEMA smoke_flyway");
		}
		registry.add("spring.datasource.url",
				() -> url + (url.contains("?") ? "&" : "?") + "currentSchema=smoke_flyway");
	}

	@Test
	void aStormOfDuplicatesRunsThePaymentOnce() throws Exception {
		HttpRequest request = HttpStorm.post(this.port, "/payments", UUID.randomUUID().toString(), "{\"amount\":10}",
				null);
		HttpStorm.run(32, this.payments::release, request);
		assertThat(this.jdbc.sql("SELECT COUNT(*) FROM payment").query(Integer.class).single()).isOne();
	}

	@Test
	void flywayCreatedTheIdempotencyTableFromTheShippedMigration() {
		assertThat(this.jdbc.sql("SELECT script FROM flyway_schema_history WHERE success ORDER BY installed_rank")
			.query(String.class)
			.list()).containsExactly("V1__payment.sql", "R__idempotency_record.sql");
	}

}
