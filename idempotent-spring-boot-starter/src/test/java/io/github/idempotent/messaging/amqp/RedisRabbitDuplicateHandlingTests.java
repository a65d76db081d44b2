package io.github.idempotent.messaging.amqp;

import java.util.UUID;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.TestRedis;

/**
 * {@link AbstractRabbitDuplicateHandlingTests} on the Redis store.
 */
class RedisRabbitDuplicateHandlingTests extends AbstractRabbitDuplicateHandlingTests {

	static final String RUN = "redis-" + UUID.randomUUID().toString().substring(0, 8);

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("idempotent.store.type", () -> "redis");
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
		registry.add("idempotent.key-prefix", () -> "rabbit-dup-" + RUN);
		registry.add("test.run", () -> RUN);
	}

}
