package io.github.idempotent.autoconfigure;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import com.github.benmanes.caffeine.cache.Caffeine;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.Lifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.unit.DataSize;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.RecordTracking;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.cache.CachingIdempotencyStore;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;
import io.github.idempotent.store.redis.RedisIdempotencyStore;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

@ExtendWith(OutputCaptureExtension.class)
class LocalCacheAutoConfigurationTests {

	private static final Fingerprint FP = new Fingerprint("fp");

	private static final Duration LEASE = Duration.ofSeconds(30);

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotentAutoConfiguration.class))
		.withPropertyValues("idempotent.store.type=memory");

	private final ApplicationContextRunner redisRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, DataRedisAutoConfiguration.class,
				IdempotentAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=" + TestRedis.host(), "spring.data.redis.port=" + TestRedis.port());

	@Test
	void offByDefault() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(IdempotencyStore.class);
			assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(InMemoryIdempotencyStore.class);
		});
	}

	@Test
	void whenEnabledTheCacheWrapsTheStoreTheExecutorUses() {
		this.contextRunner
			.withPropertyValues("idempotent.local-cache.enabled=true", "idempotent.local-cache.maximum-size=64KB",
					"idempotent.local-cache.ttl=5s")
			.run((context) -> {
				IdempotencyStore store = context.getBean(IdempotencyStore.class);
				assertThat(store).isInstanceOf(CachingIdempotencyStore.class);
				assertThat(((CachingIdempotencyStore) store).getDelegate())
					.isInstanceOf(InMemoryIdempotencyStore.class);
				assertThat(context.getBean(IdempotencyExecutor.class).getStore()).isSameAs(store);
				IdempotentLocalCacheProperties cache = context.getBean(IdempotentProperties.class).localCache();
				assertThat(cache.maximumSize()).isEqualTo(DataSize.ofKilobytes(64));
				assertThat(cache.ttl()).isEqualTo(Duration.ofSeconds(5));
			});
	}

	@Test
	void doesNotWriteThroughResultsThatJoinTheCallersTransaction() {
		this.contextRunner
			.withPropertyValues("idempotent.local-cache.enabled=true", "idempotent.store.jdbc.join-transaction=true")
			.run((context) -> assertThat(context.getBean(CachingIdempotencyStore.class).isWriteThrough()).isFalse());
		this.contextRunner.withPropertyValues("idempotent.local-cache.enabled=true")
			.run((context) -> assertThat(context.getBean(CachingIdempotencyStore.class).isWriteThrough()).isTrue());
	}

	@Test
	void theCacheIsBoundedByBytesNotByResults() {
		this.contextRunner
			.withPropertyValues("idempotent.local-cache.enabled=true", "idempotent.local-cache.maximum-size=64KB")
			.run((context) -> {
				CachingIdempotencyStore cache = context.getBean(CachingIdempotencyStore.class);
				StoredResult kilobyte = new StoredResult(new byte[1024]);
				for (int i = 0; i < 200; i++) {
					RecordKey key = new RecordKey("bytes:" + i);
					String token = ((ClaimResult.Acquired) cache.claim(key, FP, LEASE)).token();
					assertThat(cache.complete(key, token, FP, kilobyte, Duration.ofHours(1))).isTrue();
				}
				assertThat(cache.cachedBytes()).isPositive().isLessThanOrEqualTo(64 * 1024);
				assertThat(cache.cachedResults()).isBetween(1L, 63L);
			});
	}

	@Test
	void aMaximumSizeBelowTheLargestResultIsWarnedAbout(CapturedOutput output) {
		// 10000 was a number of results before the property became a size.
		this.contextRunner
			.withPropertyValues("idempotent.local-cache.enabled=true", "idempotent.local-cache.maximum-size=10000")
			.run((context) -> {
				assertThat(context.getBean(IdempotentProperties.class).localCache().maximumSize())
					.isEqualTo(DataSize.ofBytes(10000));
				assertThat(output).contains("idempotent.local-cache.maximum-size is 10000 bytes")
					.contains("give it a unit");
			});
	}

	@Test
	void onByDefaultForRedisKeptRightByInvalidationTracking() {
		AtomicReference<RecordTracking> tracking = new AtomicReference<>();
		this.redisRunner.run((context) -> {
			CachingIdempotencyStore cache = context.getBean(CachingIdempotencyStore.class);
			assertThat(cache.getDelegate()).isSameAs(context.getBean(RedisIdempotencyStore.class));
			assertThat(cache.getTracking()).isSameAs(context.getBean(RecordTracking.class));
			assertThat(context.getBean(IdempotencyExecutor.class).getStore()).isSameAs(cache);
			assertThat(cache.supportsAsync()).isTrue();
			await().atMost(Duration.ofSeconds(10)).until(cache::isServing);
			// Declared as RecordTracking: the lifecycle processor's own look-up still
			// finds it.
			assertThat(context.getBeanFactory().getBeanNamesForType(Lifecycle.class, false, false))
				.contains("redisRecordTracking");
			tracking.set(cache.getTracking());
		});
		assertThat(((Lifecycle) tracking.get()).isRunning()).isFalse();
	}

	@Test
	void redisTrackingFollowsTheMaximumStaleness() {
		this.redisRunner.withPropertyValues("idempotent.local-cache.max-staleness=2s")
			.run((context) -> assertThat(context.getBean(IdempotentProperties.class).localCache().maxStaleness())
				.isEqualTo(Duration.ofSeconds(2)));
	}

	@Test
	void redisTrackingWatchesTheStoresRedisNotTheApplicationsPrimaryOne() {
		this.redisRunner.withUserConfiguration(StoreOnARedisOfItsOwn.class).run((context) -> {
			CachingIdempotencyStore cache = context.getBean(CachingIdempotencyStore.class);
			assertThat(cache.getDelegate()).isSameAs(context.getBean(RedisIdempotencyStore.class));
			// Tracking on the primary factory, where nothing listens, would never serve.
			await().atMost(Duration.ofSeconds(10)).until(cache::isServing);
		});
	}

	@Test
	void offForRedisWhenDisabled() {
		this.redisRunner.withPropertyValues("idempotent.local-cache.enabled=false").run((context) -> {
			assertThat(context).doesNotHaveBean(CachingIdempotencyStore.class);
			assertThat(context).doesNotHaveBean(RecordTracking.class);
			assertThat(context.getBean(IdempotencyExecutor.class).getStore())
				.isSameAs(context.getBean(RedisIdempotencyStore.class));
		});
	}

	@Test
	void backsOffWithoutCaffeine() {
		this.contextRunner.withPropertyValues("idempotent.local-cache.enabled=true")
			.withClassLoader(new FilteredClassLoader(Caffeine.class))
			.run((context) -> assertThat(context.getBean(IdempotencyStore.class))
				.isInstanceOf(InMemoryIdempotencyStore.class));
	}

	@Configuration(proxyBeanMethods = false)
	static class StoreOnARedisOfItsOwn {

		@Bean
		@Primary
		LettuceConnectionFactory applicationRedis() throws IOException {
			int unused;
			try (ServerSocket socket = new ServerSocket(0)) {
				unused = socket.getLocalPort();
			}
			return new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", unused));
		}

		@Bean
		LettuceConnectionFactory idempotencyRedis() {
			return new LettuceConnectionFactory(new RedisStandaloneConfiguration(TestRedis.host(), TestRedis.port()));
		}

		@Bean
		RedisIdempotencyStore idempotencyStore(@Qualifier("idempotencyRedis") LettuceConnectionFactory redis) {
			return new RedisIdempotencyStore(redis);
		}

	}

}
