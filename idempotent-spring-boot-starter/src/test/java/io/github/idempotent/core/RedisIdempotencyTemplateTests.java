package io.github.idempotent.core;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.redis.RedisIdempotencyStore;
import io.github.idempotent.testsupport.TestRedis;

/**
 * {@link io.github.idempotent.core.IdempotencyTemplate} on the Redis store.
 */
class RedisIdempotencyTemplateTests extends AbstractIdempotencyTemplateTests {

	@Override
	protected ApplicationContextRunner runner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, DataRedisAutoConfiguration.class,
					IdempotentAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + TestRedis.host(),
					"spring.data.redis.port=" + TestRedis.port(), "idempotent.default-scope=global",
					"idempotent.store.type=redis");
	}

	@Override
	protected Class<? extends IdempotencyStore> storeType() {
		return RedisIdempotencyStore.class;
	}

}
