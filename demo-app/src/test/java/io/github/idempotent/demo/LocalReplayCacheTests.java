package io.github.idempotent.demo;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.idempotent.demo.DemoHttp.Response;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The demo declares the starter and no cache library, as an application would: replays of
 * a completed payment are still answered from the local cache that the docs say is on by
 * default with Redis, without a round trip to Redis. The context is the one
 * {@link H2CheckoutTests} starts.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "idempotent.ttl=10m")
class LocalReplayCacheTests {

	@LocalServerPort
	int port;

	@Value("${spring.data.redis.host}")
	String redisHost;

	@Value("${spring.data.redis.port}")
	int redisPort;

	@Test
	void aReplayOfACompletedPaymentSendsNoCommandToRedis() throws Exception {
		DemoHttp http = new DemoHttp(this.port);
		long account = http.openAccount(1_000);
		String orderNo = AbstractCheckoutTests.unique("cached");
		http.createOrder(orderNo, account, 100).expect(201);
		String key = AbstractCheckoutTests.unique("key");
		Response first = http.pay(orderNo, key).expect(201);
		try (RedisMonitor monitor = RedisMonitor.start(this.redisHost, this.redisPort)) {
			// The first replay reads the result from Redis and fills the cache, off the
			// caller's path: a later one is served from it.
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
				monitor.commandsMentioning(key);
				Response replay = http.pay(orderNo, key).expect(201);
				assertThat(replay.replayed()).isTrue();
				assertThat(replay.body()).isEqualTo(first.body());
				assertThat(monitor.commandsMentioning(key)).as("Redis commands on the record during a replay")
					.isEmpty();
			});
		}
		assertThat(http.balance(account)).isEqualTo(900);
	}

}
