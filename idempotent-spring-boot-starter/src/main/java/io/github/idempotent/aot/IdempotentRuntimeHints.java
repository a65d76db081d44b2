package io.github.idempotent.aot;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.util.ClassUtils;

/**
 * Hints that do not depend on the application's methods: the JDBC store's schema scripts
 * and migrations, and the Redis store's Lua scripts. The web auto-configuration brings
 * its own.
 */
class IdempotentRuntimeHints implements RuntimeHintsRegistrar {

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		if (ClassUtils.isPresent("org.springframework.jdbc.core.JdbcOperations", classLoader)) {
			hints.resources().registerPattern("io/github/idempotent/store/jdbc/schema-*.sql");
			hints.resources().registerPattern("io/github/idempotent/store/jdbc/flyway/*/*.sql");
			hints.resources().registerPattern("io/github/idempotent/store/jdbc/liquibase/changelog.xml");
		}
		if (ClassUtils.isPresent("org.springframework.data.redis.connection.RedisConnectionFactory", classLoader)) {
			hints.resources().registerPattern("io/github/idempotent/store/redis/*.lua");
		}
	}

}
