package io.github.idempotent.store.redis;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.redisson.spring.data.connection.RedissonConnectionFactory;

import org.springframework.util.ClassUtils;

import io.github.idempotent.store.AbstractInspectableIdempotencyStoreContractTest;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.testsupport.TestRedis;
import io.github.idempotent.testsupport.WithoutLettuce;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store's contract on Redisson's connection factory, in a JVM without Lettuce (as
 * {@code redisson-spring-boot-starter} leaves an application).
 */
@WithoutLettuce
class RedissonIdempotencyStoreTests extends AbstractInspectableIdempotencyStoreContractTest {

	private static RedissonClient redisson;

	private static RedissonConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		Config config = new Config();
		config.useSingleServer().setAddress("redis://" + TestRedis.host() + ":" + TestRedis.port());
		redisson = Redisson.create(config);
		connectionFactory = new RedissonConnectionFactory(redisson);
	}

	@AfterAll
	static void disconnect() {
		redisson.shutdown();
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
