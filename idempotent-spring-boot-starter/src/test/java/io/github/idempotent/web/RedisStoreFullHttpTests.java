package io.github.idempotent.web;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Nested;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import io.github.idempotent.testsupport.RedisProcess;

/**
 * A full Redis, failing open (a full store is no outage, so nothing runs unprotected),
 * and failing closed ({@link FailingClosed}).
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=redis", "idempotent.local-cache.enabled=false",
				"idempotent.retry-after=3s", "idempotent.max-duration=5s",
				"idempotent.store.redis.claim-memory-limit=0.75", "idempotent.failure-mode=open" })
class RedisStoreFullHttpTests extends AbstractRedisStoreFullHttpTests {

	private static final RedisProcess redis = RedisProcess.start(RedisProcess.freePort(), false,
			"maxmemory-policy noeviction");

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		configure(redis, registry);
	}

	@AfterAll
	static void stop() {
		redis.close();
	}

	@Override
	RedisProcess redis() {
		return redis;
	}

	@Nested
	@TestPropertySource(properties = "idempotent.failure-mode=closed")
	class FailingClosed extends AbstractRedisStoreFullHttpTests {

		@Override
		RedisProcess redis() {
			return redis;
		}

	}

}
