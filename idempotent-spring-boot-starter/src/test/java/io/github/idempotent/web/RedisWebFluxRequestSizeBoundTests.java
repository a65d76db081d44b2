package io.github.idempotent.web;

import java.util.UUID;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.AbstractFinalOutcomeTests;
import io.github.idempotent.testsupport.AbstractRequestSizeBoundTests;
import io.github.idempotent.testsupport.FinalOutcomesController;

/**
 * The request-size bound on WebFlux with the Redis store.
 */
@SpringBootTest(classes = { WebFluxTestApplication.class, FinalOutcomesController.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "idempotent.store.type=redis",
				"idempotent.local-cache.enabled=false", "idempotent.web.max-request-size=1KB" })
class RedisWebFluxRequestSizeBoundTests extends AbstractRequestSizeBoundTests {

	private static final String PREFIX = "size-webflux-" + UUID.randomUUID();

	@Autowired
	private RedisConnectionFactory connectionFactory;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		AbstractFinalOutcomeTests.useRedis(registry, PREFIX);
	}

	@Override
	protected long records(String clientKey) {
		return AbstractFinalOutcomeTests.redisRecords(this.connectionFactory, PREFIX, clientKey);
	}

}
