package io.github.idempotent.autoconfigure;

import java.time.Duration;

import io.lettuce.core.RedisClient;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.store.redis.RedisMemoryPolicyGuard;
import io.github.idempotent.testsupport.LocalRedisCluster;
import io.github.idempotent.testsupport.LocalRedisSentinel;
import io.github.idempotent.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A Redis that may evict records under memory pressure lets a retry run its method again
 * (volatile-ttl first evicts the placeholders of calls in progress): the store refuses to
 * start on one, unless the application accepts the risk. Each test starts a redis-server
 * of its own, configured as the test needs; the shared one is never reconfigured.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisEvictionPolicyTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, DataRedisAutoConfiguration.class,
				MetricsAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
				IdempotentAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=127.0.0.1", "idempotent.local-cache.enabled=false");

	@Test
	void refusesToStartOnABoundedRedisThatEvicts() {
		try (RedisProcess redis = RedisProcess.start(RedisProcess.freePort(), false, "maxmemory 10mb",
				"maxmemory-policy volatile-ttl")) {
			this.runner.withPropertyValues("spring.data.redis.port=" + redis.port()).run((context) -> {
				assertThat(context).hasFailed();
				assertThat(rootCause(context.getStartupFailure())).isInstanceOf(IllegalStateException.class)
					.hasMessageContaining("(127.0.0.1:" + redis.port() + ")")
					.hasMessageContaining("maxmemory-policy volatile-ttl")
					.hasMessageContaining("run the method again")
					.hasMessageContaining("maxmemory-policy noeviction")
					.hasMessageContaining("idempotent.store.redis.allow-evicting-policy=true");
			});
		}
	}

	@Test
	void refusesToStartOnAClusterWhoseNodesEvict() {
		try (LocalRedisCluster cluster = LocalRedisCluster.start("maxmemory 10mb", "maxmemory-policy allkeys-lru")) {
			this.runner.withPropertyValues("spring.data.redis.cluster.nodes=" + cluster.nodes()).run((context) -> {
				assertThat(context).hasFailed();
				assertThat(rootCause(context.getStartupFailure())).isInstanceOf(IllegalStateException.class)
					.hasMessageContaining("(127.0.0.1:")
					.hasMessageContaining("maxmemory-policy allkeys-lru");
			});
		}
	}

	@Test
	void startsOnAnEvictingRedisWhenTheRiskIsAccepted(CapturedOutput output) {
		try (RedisProcess redis = RedisProcess.start(RedisProcess.freePort(), false, "maxmemory 10mb",
				"maxmemory-policy allkeys-lru")) {
			this.runner
				.withPropertyValues("spring.data.redis.port=" + redis.port(),
						"idempotent.store.redis.allow-evicting-policy=true")
				.run((context) -> {
					assertThat(context).hasNotFailed().hasSingleBean(IdempotencyExecutor.class);
					assertThat(context.getBean(RedisMemoryPolicyGuard.class).isEvicting()).isTrue();
					assertThat(evicting(context.getBean(MeterRegistry.class))).isEqualTo(1);
					assertThat(output).contains("may evict records (maxmemory 10485760, maxmemory-policy allkeys-lru), "
							+ "accepted by idempotent.store.redis.allow-evicting-policy");
				});
		}
	}

	@Test
	void startsOnABoundedRedisThatDoesNotEvict() {
		try (RedisProcess redis = RedisProcess.start(RedisProcess.freePort(), false, "maxmemory 10mb",
				"maxmemory-policy noeviction")) {
			this.runner.withPropertyValues("spring.data.redis.port=" + redis.port()).run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(RedisMemoryPolicyGuard.class).isEvicting()).isFalse();
				assertThat(evicting(context.getBean(MeterRegistry.class))).isZero();
			});
		}
	}

	@Test
	void startsOnAnUnboundedRedisWhateverItsPolicy() {
		// maxmemory 0: nothing is evicted, whatever the policy says.
		try (RedisProcess redis = RedisProcess.start(RedisProcess.freePort(), false, "maxmemory 0",
				"maxmemory-policy volatile-ttl")) {
			this.runner.withPropertyValues("spring.data.redis.port=" + redis.port())
				.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(RedisMemoryPolicyGuard.class));
		}
	}

	@Test
	void evictionsTheServerReportsAreAMetric() {
		try (RedisProcess redis = RedisProcess.start(RedisProcess.freePort(), false, "maxmemory 10mb",
				"maxmemory-policy volatile-lru")) {
			this.runner
				.withPropertyValues("spring.data.redis.port=" + redis.port(),
						"idempotent.store.redis.allow-evicting-policy=true")
				.run((context) -> {
					MeterRegistry registry = context.getBean(MeterRegistry.class);
					assertThat(evictedKeys(registry)).isZero();
					fill(redis.port());
					await().atMost(Duration.ofSeconds(30)).until(() -> evictedKeys(registry) > 0);
				});
		}
	}

	@Test
	void aReconnectToAnEvictingServerIsAnErrorAndAMetric(CapturedOutput output) {
		int port = RedisProcess.freePort();
		RedisProcess first = RedisProcess.start(port, false, "maxmemory 10mb", "maxmemory-policy noeviction");
		try {
			this.runner.withPropertyValues("spring.data.redis.port=" + port).run((context) -> {
				RedisMemoryPolicyGuard guard = context.getBean(RedisMemoryPolicyGuard.class);
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				assertThat(evicting(registry)).isZero();
				// Restarted as it was: checked again, and said so. A minute: on a machine
				// at
				// load 20-38 the guard had not checked 30 s after the restart.
				first.close();
				try (RedisProcess same = RedisProcess.start(port, false, "maxmemory 10mb",
						"maxmemory-policy noeviction")) {
					await().atMost(Duration.ofSeconds(60))
						.until(() -> output.toString()
							.contains("checked again (127.0.0.1:" + port + "): maxmemory 10485760, "
									+ "maxmemory-policy noeviction, records are not evicted"));
				}
				// Restarted with another configuration, as a failover may land on one.
				first.close();
				try (RedisProcess second = RedisProcess.start(port, false, "maxmemory 10mb",
						"maxmemory-policy volatile-lru")) {
					String error = "Checked again after start-up: The Redis of the idempotency store (127.0.0.1:" + port
							+ ") has maxmemory 10485760 bytes and maxmemory-policy volatile-lru";
					await().atMost(Duration.ofSeconds(60)).until(() -> loggedAsError(output, error));
					assertThat(output).contains("The application keeps running");
					assertThat(guard.isEvicting()).isTrue();
					assertThat(evicting(registry)).isEqualTo(1);
				}
			});
		}
		finally {
			first.close();
		}
	}

	@Test
	void aFailoverToAnEvictingReplicaIsAnError(CapturedOutput output) {
		try (LocalRedisSentinel sentinel = LocalRedisSentinel.start("maxmemory 10mb",
				"maxmemory-policy volatile-ttl")) {
			this.runner
				.withPropertyValues("spring.data.redis.sentinel.master=" + LocalRedisSentinel.MASTER_NAME,
						"spring.data.redis.sentinel.nodes=" + sentinel.sentinelNodes())
				.run((context) -> {
					assertThat(context).hasNotFailed();
					RedisMemoryPolicyGuard guard = context.getBean(RedisMemoryPolicyGuard.class);
					assertThat(guard.isEvicting()).isFalse();
					sentinel.crashPrimaryAndAwaitFailover();
					// Named by its address, or by Sentinel's name for the primary when
					// the check
					// is answered before the guard's connection reports its reconnect.
					String error = "Checked again after start-up: The Redis of the idempotency store (";
					await().atMost(Duration.ofSeconds(60)).until(() -> loggedAsError(output, error));
					assertThat(output).contains("maxmemory-policy volatile-ttl");
					assertThat(guard.isEvicting()).isTrue();
					assertThat(evicting(context.getBean(MeterRegistry.class))).isEqualTo(1);
				});
		}
	}

	/**
	 * Whether the guard logged {@code message} as an error, in whichever layout the
	 * output has: Logback's own, or Spring Boot's once an earlier test of the same JVM
	 * has initialized Boot's logging.
	 */
	private static boolean loggedAsError(CapturedOutput output, String message) {
		return output.toString()
			.lines()
			.anyMatch((line) -> line.contains("ERROR") && line.contains("RedisMemoryPolicyGuard")
					&& line.contains(message));
	}

	private static double evicting(MeterRegistry registry) {
		return registry.get(RedisMemoryPolicyConfiguration.EVICTING_METER).gauge().value();
	}

	private static double evictedKeys(MeterRegistry registry) {
		return registry.get(RedisMemoryPolicyConfiguration.EVICTED_KEYS_METER).gauge().value();
	}

	/**
	 * Writes 20 MB of keys with a TTL into a Redis of 10 MB.
	 */
	private static void fill(int port) {
		RedisClient client = RedisClient.create("redis://127.0.0.1:" + port);
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			String value = "x".repeat(100_000);
			for (int i = 0; i < 200; i++) {
				connection.sync().set("filler:" + i, value, SetArgs.Builder.ex(3600));
			}
		}
		finally {
			client.shutdown();
		}
	}

	private static Throwable rootCause(Throwable failure) {
		Throwable cause = failure;
		while (cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

}
