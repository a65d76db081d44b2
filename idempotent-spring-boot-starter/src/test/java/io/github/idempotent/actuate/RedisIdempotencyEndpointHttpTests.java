package io.github.idempotent.actuate;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.TestRedis;

/**
 * The endpoint on the Redis store: the listing is a SCAN.
 */
@SpringBootTest(classes = ActuatorTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=health,idempotency",
				"management.endpoint.idempotency.access=unrestricted", "idempotent.store.type=redis" })
class RedisIdempotencyEndpointHttpTests extends AbstractIdempotencyEndpointHttpTests {

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
	}

}
