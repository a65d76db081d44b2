package smoketest.jdbc.liquibase;

import java.net.http.HttpRequest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

import org.junit.jupiter.api.Test;
import smoketest.jdbc.liquibase.SmokeApplication.PaymentController;
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
class JdbcLiquibaseSmokeTests {

	@LocalServerPort
	int port;

	@Autowired
	PaymentController payments;

	@Autowired
	JdbcClient jdbc;

	/**
	 * Starts the application on an empty database of its own, beside the test database,
	 * as on its first deployment: Liquibase creates every table, the idempotency table
	 * included (a table left by an earlier run or another test would hide a changeset
	 * that did not run).
	 */
	@DynamicPropertySource
	static void anEmptyDatabase(DynamicPropertyRegistry registry) throws SQLException {
		String url = System.getenv().getOrDefault("IDEMPOTENT_MARIADB_URL", "jdbc:mariadb://127.0.0.1:3306/test");
		try (Connection connection = DriverManager.getConnection(url, "root", "");
				Statement statement = connection.createStatement()) {
			String database = connection.getCatalog() + "_smoke_liquibase";
			statement.execute("DROP DATABASE IF EXISTS " + database);
			statement.execute("CREATE DATABASE " + database);
			registry.add("spring.datasource.url",
					() -> url.replaceFirst("^(jdbc:[a-z]+://[^/]+/)[^?]*", "$1" + database));
		}
	}

	@Test
	void aStormOfDuplicatesRunsThePaymentOnce() throws Exception {
		HttpRequest request = HttpStorm.post(this.port, "/payments", UUID.randomUUID().toString(), "{\"amount\":10}",
				null);
		HttpStorm.run(32, this.payments::release, request);
		assertThat(this.jdbc.sql("SELECT COUNT(*) FROM payment").query(Integer.class).single()).isOne();
	}

	@Test
	void liquibaseCreatedTheIdempotencyTableFromTheShippedChangelog() {
		assertThat(this.jdbc.sql("SELECT id FROM DATABASECHANGELOG ORDER BY ORDEREXECUTED")
			.query(String.class)
			.list()).containsExactly("payment", "idempotency_record-mysql");
	}

}
