package io.github.idempotent.store.jdbc;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.core.io.ClassPathResource;

import static org.assertj.core.api.Assertions.assertThat;

class ShippedMigrationsTests {

	/**
	 * Flyway finds migrations by their file name, so its scripts are copies; the
	 * Liquibase changelog runs the schema scripts themselves. A repeatable migration runs
	 * again when its text changes, which the schema scripts allow: they create only what
	 * is missing.
	 */
	@ParameterizedTest
	@EnumSource(JdbcDialect.class)
	void theFlywayMigrationIsTheSchemaScriptOfTheStoresInitializer(JdbcDialect dialect) throws IOException {
		String flyway = "io/github/idempotent/store/jdbc/flyway/" + dialect.getPlatform()
				+ "/R__idempotency_record.sql";
		assertThat(read(flyway)).as("%s, a copy of %s", flyway, JdbcDialect.schemaPath(dialect.getPlatform()))
			.isEqualTo(read(JdbcDialect.schemaPath(dialect.getPlatform())));
	}

	private static String read(String path) throws IOException {
		return new ClassPathResource(path).getContentAsString(StandardCharsets.UTF_8);
	}

}
