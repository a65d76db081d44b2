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

/**
 * Compressed results in the JDBC store's {@code result} column on PostgreSQL.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=jdbc", "idempotent.store.jdbc.initialize-schema=always",
				"spring.datasource.username=postgres", "spring.datasource.password=" })
@RequiresDatabase(Database.POSTGRESQL)
class PostgreSqlCompressedResultHttpTests extends AbstractCompressedResultHttpTests {

	private static final String TABLE = TestDatabases.uniqueTableName("compressed_http");

	@Autowired
	private DataSource dataSource;

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		registry.add("spring.datasource.url", TestDatabases::postgresqlUrl);
		registry.add("idempotent.store.jdbc.table-name", () -> TABLE);
	}

	@Override
	byte[] storedResult(String clientKey) {
		return new JdbcTemplate(this.dataSource).queryForObject(
				"SELECT result FROM " + TABLE + " WHERE idempotency_key LIKE ?", byte[].class, "%:" + clientKey);
	}

}
