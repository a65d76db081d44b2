package io.github.idempotent.store.jdbc;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.core.io.DefaultResourceLoader;

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
		String flyway = JdbcDialect.flywayLocation(dialect.getPlatform()) + "/R__idempotency_record.sql";
		assertThat(read(flyway)).as("%s, a copy of %s", flyway, dialect.getSchemaLocation())
			.isEqualTo(read(dialect.getSchemaLocation()));
	}

	private static String read(String location) throws IOException {
		return new DefaultResourceLoader().getResource(location).getContentAsString(StandardCharsets.UTF_8);
	}

}
