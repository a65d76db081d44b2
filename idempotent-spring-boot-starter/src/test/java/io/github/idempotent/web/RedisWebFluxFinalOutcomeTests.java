package io.github.idempotent.web;

import java.util.UUID;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.AbstractFinalOutcomeTests;
import io.github.idempotent.testsupport.FinalOutcomesController;

/**
 * Final and released outcomes on WebFlux with the Redis store, its local cache off.
 */
@SpringBootTest(classes = { WebFluxTestApplication.class, FinalOutcomesController.class },
		webEnvironment = WebEnvironment.RANDOM_PORT, properties = { "spring.main.web-application-type=reactive",
				"idempotent.store.type=redis", "idempotent.local-cache.enabled=false" })
class RedisWebFluxFinalOutcomeTests extends AbstractFinalOutcomeTests {

	private static final String PREFIX = "outcomes-webflux-" + UUID.randomUUID();

	@Autowired
	private RedisConnectionFactory connectionFactory;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		useRedis(registry, PREFIX);
	}

	@Override
	protected long records(String clientKey) {
		return redisRecords(this.connectionFactory, PREFIX, clientKey);
	}

}
