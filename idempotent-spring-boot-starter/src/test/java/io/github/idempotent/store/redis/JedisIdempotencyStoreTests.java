package io.github.idempotent.store.redis;

import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.util.ClassUtils;

import io.github.idempotent.store.AbstractInspectableIdempotencyStoreContractTest;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.testsupport.FaultProxy;
import io.github.idempotent.testsupport.TestRedis;
import io.github.idempotent.testsupport.WithoutLettuce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatRuntimeException;
import static org.awaitility.Awaitility.await;

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

	@Test
	void anUnansweredClaimIsReleasedOnTheStoresOwnThreadNeverOnOneOfTheJvms() {
		Set<String> threads = ConcurrentHashMap.newKeySet();
		try (FaultProxy proxy = FaultProxy.start(TestRedis.host(), TestRedis.port())) {
			JedisConnectionFactory proxied = new JedisConnectionFactory(
					new RedisStandaloneConfiguration("127.0.0.1", proxy.port()),
					JedisClientConfiguration.builder().readTimeout(Duration.ofMillis(300)).build()) {

				@Override
				public RedisConnection getConnection() {
					threads.add(Thread.currentThread().getName());
					return super.getConnection();
				}

			};
			proxied.afterPropertiesSet();
			proxied.start();
			try {
				RedisIdempotencyStore store = new RedisIdempotencyStore(proxied);
				store.setClaimMemoryLimit(1);
				RecordKey key = new RecordKey("idempotent-test:" + UUID.randomUUID());
				proxy.dropReplies();
				assertThatRuntimeException().isThrownBy(() -> store.claim(key, new Fingerprint("fp"), LEASE));
				await().until(() -> threads.contains("idempotent-redis-release"));
				// Not the common pool, nor a thread per release (CompletableFuture's on
				// one core).
				assertThat(threads).containsOnly(Thread.currentThread().getName(), "idempotent-redis-release");
				proxy.passAndReset();
				await().untilAsserted(() -> assertThat(store.inspect(key)).isEmpty());
			}
			finally {
				proxied.destroy();
			}
		}
	}

}
