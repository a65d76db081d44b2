package io.github.idempotent.autoconfigure;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

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

}
