package io.github.idempotent.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.cache.CachingIdempotencyStore;
import io.github.idempotent.testsupport.LocalRedisSentinel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The Redis store behind Sentinel through a crash of the primary: a real primary, replica
 * and sentinel of this test's own on loopback, the store configured as an application
 * does ({@code spring.data.redis.sentinel.*}) with
 * {@code idempotent.store.redis.wait-replicas=1}. What it shows is written down in
 * docs/stores.md: during the failover calls fail (fail-closed: 503) for about the
 * detection time plus the promotion, then succeed on the new primary, and records that a
 * replica acknowledged before the crash are still there.
 */
class RedisSentinelIdempotencyStoreTests {

	private static final Fingerprint FP = new Fingerprint("fp");

	private static final Duration LEASE = Duration.ofSeconds(30);

	@Test
	void recordsAcknowledgedByAReplicaSurviveACrashOfThePrimary() throws Exception {
		try (LocalRedisSentinel redis = LocalRedisSentinel.start()) {
			ConfigurableApplicationContext context = new SpringApplicationBuilder(Application.class)
				.web(WebApplicationType.NONE)
				.properties("spring.data.redis.sentinel.master=" + LocalRedisSentinel.MASTER_NAME,
						"spring.data.redis.sentinel.nodes=" + redis.sentinelNodes(), "spring.data.redis.timeout=1s",
						"spring.data.redis.connect-timeout=500ms", "idempotent.store.type=redis",
						"idempotent.store.redis.wait-replicas=1", "idempotent.store.redis.wait-timeout=500ms",
						"spring.main.banner-mode=off")
				.run();
			try {
				IdempotencyStore store = context.getBean(IdempotencyStore.class);
				List<RecordKey> completed = new ArrayList<>();
				for (int i = 0; i < 20; i++) {
					RecordKey key = key();
					String token = ((ClaimResult.Acquired) store.claim(key, FP, LEASE)).token();
					assertThat(store.complete(key, token, FP, result(key), Duration.ofMinutes(10))).isTrue();
					completed.add(key);
				}
				RecordKey inProgress = key();
				assertThat(store.claim(inProgress, FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);

				// WAIT really waits for the replica (not just for any connection): while
				// the replica does not answer, a completion takes the whole wait-timeout.
				RecordKey slow = key();
				String slowToken = ((ClaimResult.Acquired) store.claim(slow, FP, LEASE)).token();
				Thread sleeper = redis.pauseReplica(800);
				long start = System.nanoTime();
				assertThat(store.complete(slow, slowToken, FP, result(slow), Duration.ofMinutes(10))).isTrue();
				assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(400));
				sleeper.join(5000);
				redis.awaitReplicaInSync();

				// The local cache, tracked on the primary Sentinel names: one result
				// cached.
				CachingIdempotencyStore cache = context.getBean(CachingIdempotencyStore.class);
				await().atMost(Duration.ofSeconds(10)).until(cache::isServing);
				RecordKey cached = completed.get(0);
				assertThat(store.claim(cached, FP, LEASE)).isInstanceOf(ClaimResult.Completed.class);
				await().atMost(Duration.ofSeconds(10)).until(() -> cache.cachedResults() == 1);

				Probe probe = new Probe(store);
				probe.start();
				long failoverMillis = redis.crashPrimaryAndAwaitFailover();
				long recoveredAfterMillis = probe.awaitFirstSuccessAfterFailure(Duration.ofSeconds(30));
				probe.stop();
				System.out.println("Sentinel failover: promoted after " + failoverMillis
						+ " ms; store calls failed for " + recoveredAfterMillis + " ms (" + probe.failures.get()
						+ " failed, " + probe.successes.get() + " succeeded)");

				assertThat(redis.currentPrimaryPort()).isEqualTo(redis.replicaPort());
				assertThat(probe.failures.get()).as("calls refused while no primary answered").isPositive();
				for (RecordKey key : completed) {
					assertThat(store.claim(key, FP, LEASE)).isEqualTo(new ClaimResult.Completed(FP, result(key)));
				}
				assertThat(store.claim(inProgress, FP, LEASE)).isInstanceOf(ClaimResult.InProgress.class);
				RecordKey after = key();
				assertThat(store.claim(after, FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);

				// Tracking follows the failover to the new primary: a record deleted
				// there is not replayed from the cache.
				await().atMost(Duration.ofSeconds(30)).until(cache::isServing);
				assertThat(store.claim(cached, FP, LEASE)).isInstanceOf(ClaimResult.Completed.class);
				await().atMost(Duration.ofSeconds(10)).until(() -> cache.cachedResults() >= 1);
				LettuceConnectionFactory primary = new LettuceConnectionFactory(
						new RedisStandaloneConfiguration("127.0.0.1", redis.currentPrimaryPort()));
				primary.afterPropertiesSet();
				primary.start();
				try (RedisConnection connection = primary.getConnection()) {
					assertThat(connection.keyCommands().del(cached.value().getBytes(StandardCharsets.UTF_8)))
						.isEqualTo(1L);
				}
				finally {
					primary.destroy();
				}
				((RedisRecordTracking) cache.getTracking()).sync().toCompletableFuture().get(10, TimeUnit.SECONDS);
				assertThat(store.claim(cached, FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
			}
			finally {
				SpringApplication.exit(context);
			}
		}
	}

	private static RecordKey key() {
		return new RecordKey("idempotent-test:sentinel:" + UUID.randomUUID());
	}

	private static StoredResult result(RecordKey key) {
		return new StoredResult(key.value().getBytes());
	}

	/**
	 * Claims a new key every 50 ms, as traffic would, and records what the store
	 * answered.
	 */
	private static final class Probe {

		private final IdempotencyStore store;

		private final AtomicInteger failures = new AtomicInteger();

		private final AtomicInteger successes = new AtomicInteger();

		private final AtomicLong firstFailure = new AtomicLong();

		private final CountDownLatch recovered = new CountDownLatch(1);

		private final AtomicBoolean running = new AtomicBoolean(true);

		private final Thread thread;

		Probe(IdempotencyStore store) {
			this.store = store;
			this.thread = new Thread(this::run, "sentinel-probe");
			this.thread.setDaemon(true);
		}

		void start() {
			this.thread.start();
		}

		private void run() {
			while (this.running.get()) {
				try {
					this.store.claim(key(), FP, LEASE);
					this.successes.incrementAndGet();
					if (this.firstFailure.get() != 0) {
						this.recovered.countDown();
					}
				}
				catch (RuntimeException ex) {
					this.failures.incrementAndGet();
					this.firstFailure.compareAndSet(0, System.nanoTime());
				}
				try {
					Thread.sleep(50);
				}
				catch (InterruptedException ex) {
					return;
				}
			}
		}

		long awaitFirstSuccessAfterFailure(Duration timeout) throws InterruptedException {
			assertThat(this.recovered.await(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS))
				.as("store answers again after the failover")
				.isTrue();
			return (System.nanoTime() - this.firstFailure.get()) / 1_000_000;
		}

		void stop() throws InterruptedException {
			this.running.set(false);
			this.thread.interrupt();
			this.thread.join(5000);
		}

	}

	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, IdempotentAutoConfiguration.class })
	static class Application {

	}

}
