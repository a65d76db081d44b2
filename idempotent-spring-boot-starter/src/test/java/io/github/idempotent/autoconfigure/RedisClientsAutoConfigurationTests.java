package io.github.idempotent.autoconfigure;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.redisson.spring.data.connection.RedissonConnectionFactory;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import io.github.idempotent.actuate.RedisMemoryHealthIndicator;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.RecordTracking;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.cache.CachingIdempotencyStore;
import io.github.idempotent.store.redis.RedisIdempotencyStore;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Redis store on the clients other than Lettuce, with Lettuce hidden from the
 * conditions as an application that excluded it has it: the store and the health of its
 * memory work, the Lettuce-only parts are not created, and what is off says so once. (The
 * JVM itself still has Lettuce here; the tests tagged without-lettuce run where it has
 * not.)
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisClientsAutoConfigurationTests {

	private static final Fingerprint FP = new Fingerprint("fp");

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, DataRedisAutoConfiguration.class,
				IdempotentAutoConfiguration.class))
		.withClassLoader(new FilteredClassLoader("io.lettuce"))
		.withPropertyValues("spring.data.redis.host=" + TestRedis.host(), "spring.data.redis.port=" + TestRedis.port());

	@Test
	void jedisRunsTheStoreAndSaysOnceWhatIsOff(CapturedOutput output) {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(RedisIdempotencyStore.class).getConnectionFactory())
				.isInstanceOf(JedisConnectionFactory.class);
			assertMemoryIsRead(context);
			assertThat(context).doesNotHaveBean(RecordTracking.class).doesNotHaveBean(CachingIdempotencyStore.class);
			assertStoreWorks(context);
		});
		assertThat(output.toString().split("on JedisConnectionFactory", -1)).hasSize(2);
		assertThat(output).contains("off: the local cache", "wait-replicas", "asynchronous");
	}

	@Test
	void redissonRunsTheStoreAndSaysOnceWhatIsOff(CapturedOutput output) {
		this.runner.withUserConfiguration(RedissonConfiguration.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(RedisIdempotencyStore.class).getConnectionFactory())
				.isInstanceOf(RedissonConnectionFactory.class);
			assertMemoryIsRead(context);
			assertThat(context).doesNotHaveBean(RecordTracking.class).doesNotHaveBean(CachingIdempotencyStore.class);
			assertStoreWorks(context);
		});
		assertThat(output.toString().split("on RedissonConnectionFactory", -1)).hasSize(2);
	}

	@Test
	void aLocalCacheAskedForOnJedisIsBoundedByItsTtlOnly() {
		this.runner.withPropertyValues("idempotent.local-cache.enabled=true").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).hasSingleBean(CachingIdempotencyStore.class).doesNotHaveBean(RecordTracking.class);
			assertStoreWorks(context);
		});
	}

	@Test
	void waitReplicasOnJedisRefusesToStartAndSaysWhy() {
		this.runner.withPropertyValues("idempotent.store.redis.wait-replicas=1").run((context) -> {
			assertThat(context).hasFailed();
			Throwable cause = context.getStartupFailure();
			while (cause.getCause() != null) {
				cause = cause.getCause();
			}
			assertThat(cause).hasMessageContaining("wait-replicas needs the Lettuce client")
				.hasMessageContaining("JedisConnectionFactory");
		});
	}

	/**
	 * The start-up check and the health indicator read INFO through this client.
	 */
	private static void assertMemoryIsRead(AssertableApplicationContext context) {
		Health health = context.getBean(RedisMemoryHealthIndicator.class).health(true);
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).isNotEmpty()
			.allSatisfy((server, memory) -> assertThat((Map<String, ?>) memory).containsKeys("maxmemoryPolicy",
					"usedMemory"));
	}

	private static void assertStoreWorks(AssertableApplicationContext context) {
		IdempotencyStore store = context.getBean(IdempotencyStore.class);
		RecordKey key = new RecordKey("idempotent-clients:" + UUID.randomUUID() + ":_:op:k");
		ClaimResult claim = store.claim(key, FP, Duration.ofSeconds(30));
		assertThat(claim).isInstanceOf(ClaimResult.Acquired.class);
		StoredResult result = new StoredResult(new byte[] { 7 });
		assertThat(store.complete(key, ((ClaimResult.Acquired) claim).token(), FP, result, Duration.ofMinutes(1)))
			.isTrue();
		assertThat(store.claim(key, FP, Duration.ofSeconds(30))).isEqualTo(new ClaimResult.Completed(FP, result));
	}

	@Configuration(proxyBeanMethods = false)
	static class RedissonConfiguration {

		@Bean(destroyMethod = "shutdown")
		RedissonClient redisson() {
			Config config = new Config();
			config.useSingleServer().setAddress("redis://" + TestRedis.host() + ":" + TestRedis.port());
			return Redisson.create(config);
		}

		@Bean
		RedissonConnectionFactory redisConnectionFactory(RedissonClient redisson) {
			return new RedissonConnectionFactory(redisson);
		}

	}

}
