package io.github.idempotent.autoconfigure;

import java.time.Duration;
import java.util.Map;

import io.lettuce.core.RedisClient;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.github.idempotent.actuate.RedisMemoryHealthIndicator;
import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.testsupport.LocalRedisCluster;
import io.github.idempotent.testsupport.LocalRedisSentinel;
import io.github.idempotent.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A Redis that may evict records under memory pressure lets a retry run its method again
 * (volatile-ttl first evicts the placeholders of calls in progress): the store refuses to
 * start on one, unless the application accepts the risk, and its health indicator reports
 * a policy changed after start-up. Each test starts a redis-server of its own, configured
 * as the test needs; the shared one is never reconfigured.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisEvictionPolicyTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, DataRedisAutoConfiguration.class,
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
					Health health = memoryHealth(context);
					assertThat(health.getStatus()).isEqualTo(Status.UP);
					assertThat(server(health, redis.port())).containsEntry("evicts", true)
						.containsEntry("maxmemoryPolicy", "allkeys-lru");
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
				Health health = memoryHealth(context);
				assertThat(health.getStatus()).isEqualTo(Status.UP);
				assertThat(server(health, redis.port())).containsEntry("evicts", false)
					.containsEntry("maxmemory", 10485760L)
					.containsEntry("claimsRefused", false);
			});
		}
	}

	@Test
	void startsOnAnUnboundedRedisWhateverItsPolicy() {
		// maxmemory 0: nothing is evicted, whatever the policy says.
		try (RedisProcess redis = RedisProcess.start(RedisProcess.freePort(), false, "maxmemory 0",
				"maxmemory-policy volatile-ttl")) {
			this.runner.withPropertyValues("spring.data.redis.port=" + redis.port()).run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(memoryHealth(context).getStatus()).isEqualTo(Status.UP);
			});
		}
	}

	@Test
	void evictionsTheServerReportsAreInTheHealthDetails() {
		try (RedisProcess redis = RedisProcess.start(RedisProcess.freePort(), false, "maxmemory 10mb",
				"maxmemory-policy volatile-lru")) {
			this.runner
				.withPropertyValues("spring.data.redis.port=" + redis.port(),
						"idempotent.store.redis.allow-evicting-policy=true")
				.run((context) -> {
					assertThat(server(memoryHealth(context), redis.port())).containsEntry("evictedKeys", 0L);
					fill(redis.port());
					assertThat((Long) server(memoryHealth(context), redis.port()).get("evictedKeys")).isPositive();
				});
		}
	}

	@Test
	void aRestartWithAnEvictingPolicyIsDown() {
		int port = RedisProcess.freePort();
		RedisProcess first = RedisProcess.start(port, false, "maxmemory 10mb", "maxmemory-policy noeviction");
		try {
			this.runner.withPropertyValues("spring.data.redis.port=" + port).run((context) -> {
				assertThat(memoryHealth(context).getStatus()).isEqualTo(Status.UP);
				// Restarted with another configuration, as a failover may land on one:
				// read again at the next check, once the client has reconnected.
				first.close();
				try (RedisProcess second = RedisProcess.start(port, false, "maxmemory 10mb",
						"maxmemory-policy volatile-lru")) {
					await().atMost(Duration.ofSeconds(60))
						.until(() -> memoryHealth(context).getDetails()
							.toString()
							.contains("maxmemoryPolicy=volatile-lru"));
					Health health = memoryHealth(context);
					assertThat(health.getStatus()).isEqualTo(Status.DOWN);
					assertThat(server(health, port)).containsEntry("evicts", true);
				}
			});
		}
		finally {
			first.close();
		}
	}

	@Test
	void aFailoverToAnEvictingReplicaIsDown() {
		try (LocalRedisSentinel sentinel = LocalRedisSentinel.start("maxmemory 10mb",
				"maxmemory-policy volatile-ttl")) {
			this.runner
				.withPropertyValues("spring.data.redis.sentinel.master=" + LocalRedisSentinel.MASTER_NAME,
						"spring.data.redis.sentinel.nodes=" + sentinel.sentinelNodes())
				.run((context) -> {
					assertThat(context).hasNotFailed();
					assertThat(memoryHealth(context).getStatus()).isEqualTo(Status.UP);
					sentinel.crashPrimaryAndAwaitFailover();
					await().atMost(Duration.ofSeconds(60))
						.until(() -> memoryHealth(context).getDetails().toString().contains("volatile-ttl"));
					assertThat(memoryHealth(context).getStatus()).isEqualTo(Status.DOWN);
				});
		}
	}

	private static Health memoryHealth(AssertableApplicationContext context) {
		return context.getBean(RedisMemoryHealthIndicator.class).health(true);
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> server(Health health, int port) {
		return (Map<String, Object>) health.getDetails().get("127.0.0.1:" + port);
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
