package io.github.idempotent.store.redis;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.util.ClassUtils;

import io.github.idempotent.store.AbstractInspectableIdempotencyStoreContractTest;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.testsupport.TestRedis;
import io.github.idempotent.testsupport.WithoutLettuce;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store's contract on Jedis, in a JVM without Lettuce.
 */
@WithoutLettuce
class JedisIdempotencyStoreTests extends AbstractInspectableIdempotencyStoreContractTest {

	private static JedisConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = new JedisConnectionFactory(
				new RedisStandaloneConfiguration(TestRedis.host(), TestRedis.port()));
		connectionFactory.afterPropertiesSet();
		connectionFactory.start();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Override
	protected IdempotencyStore createStore() {
		return new RedisIdempotencyStore(connectionFactory);
	}

	@Test
	void runsWithoutLettuceOnTheClassPath() {
		assertThat(ClassUtils.isPresent("io.lettuce.core.RedisClient", getClass().getClassLoader())).isFalse();
		assertThat(((RedisIdempotencyStore) store()).supportsAsync()).isFalse();
	}

}
