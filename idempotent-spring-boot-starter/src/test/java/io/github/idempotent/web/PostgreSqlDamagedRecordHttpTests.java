package io.github.idempotent.web;

import javax.sql.DataSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Damaged records on the JDBC store on PostgreSQL: a {@code result} column overwritten.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=jdbc", "idempotent.store.jdbc.initialize-schema=always",
				"spring.datasource.username=postgres", "spring.datasource.password=" })
@RequiresDatabase(Database.POSTGRESQL)
class PostgreSqlDamagedRecordHttpTests extends AbstractDamagedRecordHttpTests {

	private static final String TABLE = TestDatabases.uniqueTableName("damaged_http");

	@Autowired
	private DataSource dataSource;

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		registry.add("spring.datasource.url", TestDatabases::postgresqlUrl);
		registry.add("idempotent.store.jdbc.table-name", () -> TABLE);
	}

	@Override
	String recordKey(String clientKey) {
		return jdbc().queryForObject("SELECT idempotency_key FROM " + TABLE + " WHERE idempotency_key LIKE ?",
				String.class, "%:" + clientKey);
	}

	@Override
	byte[] storedResult(String clientKey) {
		return jdbc().queryForObject("SELECT result FROM " + TABLE + " WHERE idempotency_key LIKE ?", byte[].class,
				"%:" + clientKey);
	}

	@Override
	void storeResult(String clientKey, byte[] result) {
		int rows = jdbc().update("UPDATE " + TABLE + " SET result = ? WHERE idempotency_key LIKE ?", result,
				"%:" + clientKey);
		assertThat(rows).isEqualTo(1);
	}

	private JdbcTemplate jdbc() {
		return new JdbcTemplate(this.dataSource);
	}

}
