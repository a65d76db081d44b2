package io.github.idempotent.web;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.TestRedis;
import io.github.idempotent.testsupport.WithoutLettuce;

/**
 * {@code CompletableFuture} controllers on the Redis store on Jedis, in a JVM without
 * Lettuce: the store has no asynchronous calls there, so the protocol runs its blocking
 * ones off the caller's thread, with the same contract.
 */
@WithoutLettuce
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=redis", "spring.data.redis.client-type=jedis" })
class JedisFutureHttpContractTests extends AbstractFutureHttpContractTests {

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
	}

}
