package io.github.idempotent.store.jdbc;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * A table of the JDBC store that is missing, or lacks a column, stops the start-up as
 * Spring Boot reports what an application must fix: the "APPLICATION FAILED TO START"
 * box, with what is wrong and what to do, rather than the message buried in a chain of
 * bean creation exceptions.
 */
@ExtendWith(OutputCaptureExtension.class)
class JdbcTableFailureAnalyzerTests {

	@Test
	@RequiresDatabase(Database.POSTGRESQL)
	void aMissingTableStopsTheStartUpWithWhatIsWrongAndWhatToDo(CapturedOutput output) {
		String table = TestDatabases.uniqueTableName("idem_missing");
		// A server database, where the starter creates nothing by default
		// (initialize-schema=embedded).
		SpringApplicationBuilder application = new SpringApplicationBuilder(StoreApplication.class)
			.web(WebApplicationType.NONE)
			.properties("spring.main.banner-mode=off", "spring.datasource.url=" + TestDatabases.postgresqlUrl(),
					"spring.datasource.username=postgres", "idempotent.store.type=jdbc",
					"idempotent.store.jdbc.table-name=" + table, "idempotent.default-scope=global");
		assertThatException().isThrownBy(application::run);
		Box box = Box.in(output.getAll());
		assertThat(box.description())
			.startsWith("The table '" + table + "' of the JDBC idempotency store does not "
					+ "exist in PostgreSQL database '")
			.doesNotContain("initialize-schema");
		assertThat(box.action())
			.startsWith("Create it with the script the starter ships for this database, "
					+ "io/github/idempotent/store/jdbc/schema-postgresql.sql")
			.contains("Flyway location classpath:io/github/idempotent/store/jdbc/flyway/postgresql, "
					+ "Liquibase changelog io/github/idempotent/store/jdbc/liquibase/changelog.xml")
			.contains("idempotent.store.jdbc.initialize-schema=always");
	}

	@Test
	@RequiresDatabase(Database.MARIADB)
	void aTableWithoutAColumnOfTheStoreIsAnalysedWithWhatToDo() {
		String table = TestDatabases.uniqueTableName("idem_no_result");
		try (HikariDataSource mariadb = TestDatabases.mariadb()) {
			JdbcTemplate jdbc = new JdbcTemplate(mariadb);
			jdbc.execute("CREATE TABLE " + table + " (idempotency_key VARCHAR(512) PRIMARY KEY, state CHAR(1), "
					+ "owner_token VARCHAR(64), fingerprint VARCHAR(255), expires_at TIMESTAMP(3))");
			try {
				new ApplicationContextRunner().withUserConfiguration(StoreApplication.class)
					// not the pool itself: the context would close it
					.withBean(DataSource.class, () -> new DelegatingDataSource(mariadb))
					.withPropertyValues("idempotent.store.type=jdbc", "idempotent.store.jdbc.table-name=" + table,
							"idempotent.default-scope=global")
					.run((context) -> {
						FailureAnalysis analysis = new JdbcTableFailureAnalyzer().analyze(context.getStartupFailure());
						assertThat(analysis).isNotNull();
						assertThat(analysis.getDescription())
							.startsWith("The table '" + table + "' of the JDBC idempotency store in MariaDB")
							.endsWith("lacks the column(s) [result] (it has [idempotency_key, state, owner_token, "
									+ "fingerprint, expires_at]).");
						assertThat(analysis.getAction())
							.startsWith("Create it anew with the script the starter "
									+ "ships for this database, io/github/idempotent/store/jdbc/schema-mysql.sql")
							.endsWith("(which keeps an existing table: drop it first).");
					});
			}
			finally {
				jdbc.execute("DROP TABLE IF EXISTS " + table);
			}
		}
	}

	@Test
	void otherStartUpFailuresAreLeftToSpringBoot() {
		assertThat(new JdbcTableFailureAnalyzer().analyze(new IllegalStateException("Cannot check the table")))
			.isNull();
	}

	/**
	 * The failure analysis Spring Boot prints, as a user reads it.
	 */
	record Box(String description, String action) {

		static Box in(String output) {
			int box = output.indexOf("APPLICATION FAILED TO START");
			assertThat(box).as("Spring Boot's failure analysis in the log:%n%s", output).isNotNegative();
			String report = output.substring(box);
			int description = report.indexOf("Description:");
			int action = report.indexOf("Action:");
			assertThat(description).isNotNegative().isLessThan(action);
			String rest = report.substring(action + "Action:".length()).strip();
			return new Box(report.substring(description + "Description:".length(), action).strip(),
					rest.lines().takeWhile((line) -> !line.isBlank()).reduce((a, b) -> a + "\n" + b).orElse(""));
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataSourceAutoConfiguration.class, IdempotentAutoConfiguration.class })
	static class StoreApplication {

	}

}
