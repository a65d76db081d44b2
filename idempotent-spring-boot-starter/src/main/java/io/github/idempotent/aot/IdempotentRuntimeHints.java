package io.github.idempotent.aot;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.util.ClassUtils;

import io.github.idempotent.web.ResponseEntityResultConverter;

/**
 * Hints that do not depend on the application's methods, registered through
 * {@code META-INF/spring/aot.factories}:
 * <ul>
 * <li>the JDBC store's {@code schema-*.sql} scripts, read from the class path when the
 * table is created at start-up, and the Flyway and Liquibase migrations that run
 * them;</li>
 * <li>the Redis store's Lua scripts ({@code *.lua}), read from the class path once, when
 * the store is first used;</li>
 * <li>the stored form of a {@code ResponseEntity} result, which Jackson writes and reads
 * back on a replay.</li>
 * </ul>
 */
public class IdempotentRuntimeHints implements RuntimeHintsRegistrar {

	static final String JDBC_SCHEMAS = "io/github/idempotent/store/jdbc/schema-*.sql";

	static final String FLYWAY_MIGRATIONS = "io/github/idempotent/store/jdbc/flyway/*/*.sql";

	static final String LIQUIBASE_CHANGELOG = "io/github/idempotent/store/jdbc/liquibase/changelog.xml";

	static final String REDIS_SCRIPTS = "io/github/idempotent/store/redis/*.lua";

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		if (ClassUtils.isPresent("org.springframework.jdbc.core.JdbcOperations", classLoader)) {
			hints.resources().registerPattern(JDBC_SCHEMAS);
			hints.resources().registerPattern(FLYWAY_MIGRATIONS);
			hints.resources().registerPattern(LIQUIBASE_CHANGELOG);
		}
		if (ClassUtils.isPresent("org.springframework.data.redis.connection.RedisConnectionFactory", classLoader)) {
			hints.resources().registerPattern(REDIS_SCRIPTS);
		}
		if (ClassUtils.isPresent("org.springframework.http.ResponseEntity", classLoader)) {
			new BindingReflectionHintsRegistrar().registerReflectionHints(hints.reflection(),
					ResponseEntityResultConverter.StoredResponse.class);
		}
	}

}
