package io.github.idempotent.web;

import org.junit.jupiter.api.AfterAll;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.RedisProcess;

/**
 * A Redis under {@code maxmemory-policy noeviction} full of an attacker's records answers
 * {@code OOM} to every write, failing open: the victim's key is refused, not run
 * unprotected. On a redis-server of its own, with a {@code maxmemory} a few hundred KB
 * above what it holds at start: the shared one must not run out of memory under the other
 * tests.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=redis", "idempotent.local-cache.enabled=false",
				"idempotent.failure-mode=open", "idempotent.retry-after=3s", "idempotent.max-duration=5s" })
class RedisStoreFullHttpTests extends AbstractStoreFullHttpTests {

	private static final RedisProcess redis = RedisProcess.start(RedisProcess.freePort(), false,
			"maxmemory-policy noeviction");

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", redis.port()));
		factory.afterPropertiesSet();
		factory.start();
		try (RedisConnection connection = factory.getConnection()) {
			long used = Long.parseLong(connection.serverCommands().info("memory").getProperty("used_memory"));
			connection.serverCommands().setConfig("maxmemory", Long.toString(used + 192 * 1024));
		}
		finally {
			factory.destroy();
		}
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", redis::port);
	}

	@AfterAll
	static void stop() {
		redis.close();
	}

	@Override
	int attackerOrderLength() {
		return 2_000;
	}

}
