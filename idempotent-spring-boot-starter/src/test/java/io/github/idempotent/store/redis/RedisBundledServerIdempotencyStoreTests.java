package io.github.idempotent.store.redis;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.idempotent.store.AbstractInspectableIdempotencyStoreContractTest;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store contract on the redis-server bundled with embedded-redis, Redis 6.2: a server
 * that refuses {@code SET} with {@code NX} and {@code GET}, so every claim runs the claim
 * script, where the other Redis tests on Redis 7 claim with the native command.
 */
class RedisBundledServerIdempotencyStoreTests extends AbstractInspectableIdempotencyStoreContractTest {

	private static TestRedis.EmbeddedRedis redis;

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void startRedis() {
		redis = TestRedis.EmbeddedRedis.start();
		connectionFactory = redis.connectionFactory();
	}

	@AfterAll
	static void stopRedis() {
		connectionFactory.destroy();
		redis.close();
	}

	@Override
	protected IdempotencyStore createStore() {
		return new RedisIdempotencyStore(connectionFactory);
	}

	@Test
	void theBundledServerIsOneThatRefusesTheNativeClaim() {
		try (RedisConnection connection = connectionFactory.getConnection()) {
			assertThat(connection.serverCommands().info("server").getProperty("redis_version")).startsWith("6.");
		}
	}

}
