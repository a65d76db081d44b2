package io.github.idempotent.store.redis;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.store.cache.CachingIdempotencyStore;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Counts the Redis commands an {@code @Idempotent} call sends, from
 * {@code INFO commandstats} of a private server (its statistics are reset before each
 * phase, which must never be done to a shared one). Counts are deterministic, timings are
 * not: this is the part of the benchmarks that is a test.
 * <p>
 * A round trip is one EVALSHA (or EVAL, the one-time fallback when the server does not
 * know a script). The commands a Lua script runs inside the server ({@code HMGET},
 * {@code HSET}, ...) are listed in {@code commandstats} too, but they are no round trip:
 * they are checked to be only those.
 */
class RedisCommandCountTests {

	private static final int CALLS = 50;

	/**
	 * Commands the store's Lua scripts run inside the server.
	 */
	private static final Set<String> SCRIPT_INTERNAL = Set.of("get", "set", "hmget", "pexpire", "pttl", "del");

	/**
	 * Commands this test sends itself, on its own connection, to read the statistics.
	 */
	private static final Set<String> MEASUREMENT = Set.of("info", "config");

	private static TestRedis.EmbeddedRedis redis;

	private static LettuceConnectionFactory statsConnectionFactory;

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotentAutoConfiguration.class))
		.withBean(LettuceConnectionFactory.class,
				() -> new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", redis.port())))
		.withBean(Payments.class)
		.withPropertyValues("idempotent.default-scope=global", "idempotent.store.type=redis");

	@BeforeAll
	static void startRedis() {
		redis = TestRedis.EmbeddedRedis.start();
		statsConnectionFactory = redis.connectionFactory();
	}

	@AfterAll
	static void stopRedis() {
		statsConnectionFactory.destroy();
		redis.stop();
	}

	/**
	 * Commands the server received while every key was paid once, from reset statistics.
	 */
	private Map<String, Long> commandsOf(Payments payments, String[] keys) {
		resetStats();
		for (String key : keys) {
			payments.pay(key, 10);
		}
		return commandStats();
	}

	@Test
	void firstCallCostsTwoRoundTripsAndReplayOne() {
		// The store alone, without the local cache in front.
		this.contextRunner.withPropertyValues("idempotent.local-cache.enabled=false").run((context) -> {
			Payments payments = context.getBean(Payments.class);
			warmUp(payments);
			String[] keys = newKeys();

			Map<String, Long> firstCalls = commandsOf(payments, keys);
			Map<String, Long> replays = commandsOf(payments, keys);

			System.out.println("Redis commands for " + CALLS + " first calls: " + firstCalls);
			System.out.println("Redis commands for " + CALLS + " replays: " + replays);
			assertThat(payments.executions()).isEqualTo(CALLS + 1);
			assertThat(roundTrips(firstCalls)).isPositive().isLessThanOrEqualTo(2L * CALLS);
			assertThat(roundTrips(replays)).isPositive().isLessThanOrEqualTo(CALLS);
			assertOnlyScriptsWereSent(firstCalls);
			assertOnlyScriptsWereSent(replays);
			// Inside Redis: a first call reads and writes its record once per script
			// (GET, SET with PX), a replay reads it once.
			assertThat(commandsInsideScripts(firstCalls)).isEqualTo(4L * CALLS);
			assertThat(commandsInsideScripts(replays)).isEqualTo(CALLS);
		});
	}

	@Test
	void replayOfAHotKeyCostsNoRoundTripWithTheLocalCache() {
		// The default: the cache kept right by Redis invalidation tracking.
		this.contextRunner.run((context) -> {
			CachingIdempotencyStore cache = context.getBean(CachingIdempotencyStore.class);
			await().atMost(Duration.ofSeconds(10)).until(cache::isServing);
			Payments payments = context.getBean(Payments.class);
			warmUp(payments);
			String[] keys = newKeys();

			Map<String, Long> firstCalls = commandsOf(payments, keys);
			Map<String, Long> firstReplays = commandsOf(payments, keys);
			await().atMost(Duration.ofSeconds(10)).until(() -> cache.cachedResults() >= CALLS);
			Map<String, Long> replays = commandsOf(payments, keys);

			System.out.println("With the local cache, Redis commands for " + CALLS + " first calls: " + firstCalls);
			System.out.println("With the local cache, Redis commands for " + CALLS + " first replays: " + firstReplays);
			System.out.println("With the local cache, Redis commands for " + CALLS + " replays: " + replays);
			assertThat(payments.executions()).isEqualTo(CALLS + 1);
			assertThat(roundTrips(firstCalls)).isPositive().isLessThanOrEqualTo(2L * CALLS);
			// The first replay here: the claim, then a tracked GET and PTTL off the
			// caller's path.
			assertThat(roundTrips(firstReplays)).isEqualTo(CALLS);
			assertThat(roundTrips(replays)).isZero();
			Map<String, Long> others = new HashMap<>(replays);
			others.keySet().removeAll(MEASUREMENT);
			others.keySet().remove("ping");
			assertThat(others).as("commands sent besides the tracking heartbeat").isEmpty();
		});
	}

	@Test
	void scriptsAreSentAgainWhenTheServerHasForgottenThem() {
		this.contextRunner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			warmUp(payments);
			try (RedisConnection connection = statsConnectionFactory.getConnection()) {
				connection.scriptingCommands().scriptFlush();
			}
			resetStats();
			String key = UUID.randomUUID().toString();
			payments.pay(key, 10);
			payments.pay(key, 10);
			Map<String, Long> stats = commandStats();
			// Claim and complete each fail once with NOSCRIPT and are sent as EVAL; the
			// replay's claim then runs by SHA again.
			assertThat(stats).containsEntry("eval", 2L).containsEntry("evalsha", 3L);
			assertThat(payments.executions()).isEqualTo(2);
		});
	}

	private static void warmUp(Payments payments) {
		// Loads the scripts (the first EVALSHA of each fails with NOSCRIPT and is sent
		// again as EVAL) and settles the connection before anything is counted.
		String key = UUID.randomUUID().toString();
		payments.pay(key, 10);
		payments.pay(key, 10);
	}

	private static String[] newKeys() {
		String[] keys = new String[CALLS];
		for (int i = 0; i < CALLS; i++) {
			keys[i] = UUID.randomUUID().toString();
		}
		return keys;
	}

	private static long roundTrips(Map<String, Long> stats) {
		return stats.getOrDefault("evalsha", 0L) + stats.getOrDefault("eval", 0L);
	}

	private static long commandsInsideScripts(Map<String, Long> stats) {
		return SCRIPT_INTERNAL.stream().mapToLong((command) -> stats.getOrDefault(command, 0L)).sum();
	}

	private static void assertOnlyScriptsWereSent(Map<String, Long> stats) {
		Map<String, Long> others = new HashMap<>(stats);
		others.keySet().removeAll(Set.of("evalsha", "eval"));
		others.keySet().removeAll(SCRIPT_INTERNAL);
		others.keySet().removeAll(MEASUREMENT);
		assertThat(others).as("commands sent besides the scripts").isEmpty();
	}

	private static void resetStats() {
		try (RedisConnection connection = statsConnectionFactory.getConnection()) {
			connection.serverCommands().resetConfigStats();
		}
	}

	/**
	 * Calls per command name, from lines such as
	 * {@code cmdstat_evalsha:calls=100,usec=...,failed_calls=0}.
	 */
	static Map<String, Long> commandStats() {
		Properties info;
		try (RedisConnection connection = statsConnectionFactory.getConnection()) {
			info = connection.serverCommands().info("commandstats");
		}
		Map<String, Long> calls = new HashMap<>();
		for (String name : info.stringPropertyNames()) {
			if (name.startsWith("cmdstat_")) {
				String value = info.getProperty(name);
				int start = value.indexOf("calls=") + "calls=".length();
				int end = value.indexOf(',', start);
				// Redis 7 names subcommands "config|resetstat": count them under the
				// command.
				String command = name.substring("cmdstat_".length()).toLowerCase().replaceFirst("\\|.*", "");
				calls.merge(command, Long.parseLong(value.substring(start, (end > 0) ? end : value.length())),
						Long::sum);
			}
		}
		return calls;
	}

	static class Payments {

		private int executions;

		// Read through a method: the test holds the proxy, whose own fields stay unset.
		public int executions() {
			return this.executions;
		}

		@Idempotent(key = "#key")
		public Receipt pay(String key, int amount) {
			this.executions++;
			return new Receipt(key, amount, "PAID");
		}

	}

	record Receipt(String key, int amount, String status) {
	}

}
