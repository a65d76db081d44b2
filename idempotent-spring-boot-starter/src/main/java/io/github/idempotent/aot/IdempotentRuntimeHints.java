package io.github.idempotent.aot;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.util.ClassUtils;

import io.github.idempotent.web.ResponseEntityResultConverter;

/**
 * Hints that do not depend on the application's methods: the JDBC store's schema scripts
 * and migrations, the Redis store's Lua scripts, and the stored form of a
 * {@code ResponseEntity}.
 */
class IdempotentRuntimeHints implements RuntimeHintsRegistrar {

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
