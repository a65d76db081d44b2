package io.github.idempotent.web;

import org.junit.jupiter.api.BeforeEach;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.AbstractReplayCustomizerTests;
import io.github.idempotent.testsupport.TestRedis;
import io.github.idempotent.web.WebFluxTestApplication.Executions;

/**
 * Replay customizers on WebFlux with the Redis store: recorded responses.
 */
@SpringBootTest(classes = WebFluxTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "idempotent.store.type=redis",
				"idempotent.local-cache.enabled=false" })
@Import(AbstractReplayCustomizerTests.Customizers.class)
class RedisWebFluxReplayCustomizerTests extends AbstractReplayCustomizerTests {

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
	}

	@Autowired
	private Executions executions;

	@BeforeEach
	void reset() {
		this.executions.reset();
	}

	@Override
	protected int runs(String counter) {
		return this.executions.count(counter);
	}

	@Override
	protected boolean recorded(String endpoint) {
		return true;
	}

}
