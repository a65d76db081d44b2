package io.github.idempotent.autoconfigure;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.cache.CachingIdempotencyStore;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A context whose local cache is kept right by Redis tracking closes without a warning:
 * the tracking connection closes while Lettuce still runs, rather than being cut by its
 * shutdown and reconnected into a terminated executor.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisTrackingShutdownTests {

	private final ApplicationContextRunner redisRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, DataRedisAutoConfiguration.class,
				IdempotentAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=" + TestRedis.host(), "spring.data.redis.port=" + TestRedis.port());

	@Test
	void aContextWithTheLocalCacheClosesQuietly(CapturedOutput output) {
		AtomicInteger before = new AtomicInteger();
		this.redisRunner.run((context) -> {
			CachingIdempotencyStore cache = context.getBean(CachingIdempotencyStore.class);
			await().atMost(Duration.ofSeconds(10)).until(cache::isServing);
			before.set(output.getAll().length());
		});
		String shutdown = output.getAll().substring(before.get());
		assertThat(shutdown).doesNotContain(" WARN ", " ERROR ", "Exception", "\tat ");
	}

	@Test
	void aContextWhoseStoreWaitsForReplicasClosesQuietly(CapturedOutput output) {
		AtomicInteger before = new AtomicInteger();
		this.redisRunner
			.withPropertyValues("idempotent.store.redis.wait-replicas=1", "idempotent.store.redis.wait-timeout=10ms")
			.run((context) -> {
				// A claim leaves a connection of the store's own open (its WAIT times
				// out:
				// there is no replica).
				IdempotencyStore store = context.getBean(IdempotencyStore.class);
				RecordKey key = new RecordKey("shutdown:" + UUID.randomUUID());
				assertThat(store.claim(key, new Fingerprint("fp"), Duration.ofSeconds(30)))
					.isInstanceOf(ClaimResult.Acquired.class);
				before.set(output.getAll().length());
			});
		String shutdown = output.getAll().substring(before.get());
		assertThat(shutdown).doesNotContain(" WARN ", " ERROR ", "Exception", "\tat ");
	}

}
