package io.github.idempotent.aot;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.beans.factory.aot.AotServices;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.aot.hint.predicate.RuntimeHintsPredicates.resource;

class IdempotentRuntimeHintsTests {

	private static final List<String> SCHEMAS = List.of("io/github/idempotent/store/jdbc/schema-h2.sql",
			"io/github/idempotent/store/jdbc/schema-postgresql.sql", "io/github/idempotent/store/jdbc/schema-mysql.sql",
			"io/github/idempotent/store/jdbc/flyway/h2/R__idempotency_record.sql",
			"io/github/idempotent/store/jdbc/flyway/postgresql/R__idempotency_record.sql",
			"io/github/idempotent/store/jdbc/flyway/mysql/R__idempotency_record.sql",
			"io/github/idempotent/store/jdbc/liquibase/changelog.xml");

	@Test
	void everyShippedJdbcSchemaIsAResource() {
		RuntimeHints hints = new RuntimeHints();
		new IdempotentRuntimeHints().registerHints(hints, getClass().getClassLoader());
		for (String schema : SCHEMAS) {
			assertThat(new ClassPathResource(schema).exists()).as(schema).isTrue();
			assertThat(resource().forResource(schema)).as(schema).accepts(hints);
		}
		assertThat(resource().forResource("io/github/idempotent/store/jdbc/other.sql")).rejects(hints);
	}

	@Test
	void everyRedisScriptIsAResource() throws Exception {
		RuntimeHints hints = new RuntimeHints();
		new IdempotentRuntimeHints().registerHints(hints, getClass().getClassLoader());
		Resource[] scripts = new PathMatchingResourcePatternResolver()
			.getResources("classpath*:io/github/idempotent/store/redis/*.lua");
		assertThat(scripts).hasSize(7);
		for (Resource script : scripts) {
			String path = "io/github/idempotent/store/redis/" + script.getFilename();
			assertThat(resource().forResource(path)).as(path).accepts(hints);
		}
		assertThat(resource().forResource("io/github/idempotent/store/redis/other.txt")).rejects(hints);
	}

	@Test
	void noRedisScriptsWithoutSpringDataRedis() {
		RuntimeHints hints = new RuntimeHints();
		new IdempotentRuntimeHints().registerHints(hints, new FilteredClassLoader("org.springframework.data.redis"));
		assertThat(resource().forResource("io/github/idempotent/store/redis/claim.lua")).rejects(hints);
	}

	@Test
	void nothingForLibrariesThatAreAbsent() {
		RuntimeHints hints = new RuntimeHints();
		new IdempotentRuntimeHints().registerHints(hints, new FilteredClassLoader("org.springframework.jdbc"));
		assertThat(resource().forResource(SCHEMAS.get(0))).rejects(hints);
	}

	@Test
	void registeredForAotProcessing() {
		assertThat(AotServices.factories().load(RuntimeHintsRegistrar.class))
			.anyMatch(IdempotentRuntimeHints.class::isInstance);
	}

}
