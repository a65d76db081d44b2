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
import io.github.idempotent.core.IdempotentAnnotationAutoConfiguration;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
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
 * A claim is one {@code SET ... NX PX ... GET}; a completion one EVALSHA (or EVAL, the
 * one-time fallback when the server does not know a script). The commands a Lua script
 * runs inside the server ({@code GET}, {@code SET}, ...) are listed in
 * {@code commandstats} too, but they are no round trip, so the counts are compared whole.
 */
class RedisCommandCountTests {

	private static final int CALLS = 50;

	/**
	 * Commands this test sends itself, on its own connection, to read the statistics.
	 */
	private static final Set<String> MEASUREMENT = Set.of("info", "config");

	private static TestRedis.EmbeddedRedis redis;

	private static LettuceConnectionFactory statsConnectionFactory;

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(IdempotentAutoConfiguration.class, IdempotentAnnotationAutoConfiguration.class))
		.withBean(LettuceConnectionFactory.class,
				() -> new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", redis.port())))
		.withBean(Payments.class)
		.withPropertyValues("idempotent.default-scope=global", "idempotent.store.type=redis");

	@BeforeAll
	static void startRedis() {
		redis = TestRedis.EmbeddedRedis.startInstalled();
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
			if (setClaims()) {
				// A first call: the claim's SET, and the completion's script, which runs
				// a GET and a SET inside Redis. A replay: the claim's SET, which answers
				// the stored record. Nothing else.
				assertThat(withoutMeasurement(firstCalls))
					.isEqualTo(Map.of("set", 2L * CALLS, "evalsha", (long) CALLS, "get", (long) CALLS));
				assertThat(withoutMeasurement(replays)).isEqualTo(Map.of("set", (long) CALLS));
			}
			else {
				// Before Redis 7.0 the claim is a script too: two scripts, each a GET and
				// a SET inside Redis, for a first call; one, a GET, for a replay.
				assertThat(withoutMeasurement(firstCalls))
					.isEqualTo(Map.of("evalsha", 2L * CALLS, "get", 2L * CALLS, "set", 2L * CALLS));
				assertThat(withoutMeasurement(replays)).isEqualTo(Map.of("evalsha", (long) CALLS, "get", (long) CALLS));
			}
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
			// The first replay here: the claim, then a tracked GET and PTTL off the
			// caller's path that fill the cache (asynchronous: not all counted yet).
			Map<String, Long> firstReplayCommands = withoutMeasurement(firstReplays);
			firstReplayCommands.keySet().removeAll(Set.of("ping", "get", "pttl"));
			assertThat(firstReplayCommands)
				.isEqualTo(setClaims() ? Map.of("set", (long) CALLS) : Map.of("evalsha", (long) CALLS));
			Map<String, Long> others = withoutMeasurement(replays);
			others.remove("ping");
			assertThat(others).as("commands sent besides the tracking heartbeat").isEmpty();
		});
	}

	@Test
	void aDuplicateOfACallInProgressLetsTheClaimScriptJudgeTheLease() {
		this.contextRunner.withPropertyValues("idempotent.local-cache.enabled=false").run((context) -> {
			RedisIdempotencyStore store = context.getBean(RedisIdempotencyStore.class);
			Fingerprint fingerprint = new Fingerprint("fp");
			Duration lease = Duration.ofMinutes(1);
			RecordKey warmUp = new RecordKey("count:" + UUID.randomUUID());
			store.claim(warmUp, fingerprint, lease);
			store.claim(warmUp, fingerprint, lease);
			RecordKey key = new RecordKey("count:" + UUID.randomUUID());
			store.claim(key, fingerprint, lease);

			resetStats();
			ClaimResult duplicate = store.claim(key, fingerprint, lease);
			Map<String, Long> commands = withoutMeasurement(commandStats());

			assertThat(duplicate).isInstanceOf(ClaimResult.InProgress.class);
			// No lease check in Java: the script reads the lease (GET and PTTL inside
			// Redis), so its own check is the one every contract test of a live lease
			// goes through.
			Map<String, Long> script = Map.of("evalsha", 1L, "get", 1L, "pttl", 1L);
			if (setClaims()) {
				Map<String, Long> expected = new HashMap<>(script);
				expected.put("set", 1L);
				assertThat(commands).isEqualTo(expected);
			}
			else {
				assertThat(commands).isEqualTo(script);
			}
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
			if (setClaims()) {
				// The completion fails once with NOSCRIPT and is sent as EVAL; claims
				// need no script.
				assertThat(stats).containsEntry("eval", 1L).containsEntry("evalsha", 1L);
			}
			else {
				// Claim and complete each fail once with NOSCRIPT and are sent as EVAL;
				// the replay's claim then runs by SHA again.
				assertThat(stats).containsEntry("eval", 2L).containsEntry("evalsha", 3L);
			}
			assertThat(payments.executions()).isEqualTo(2);
		});
	}

	private static void warmUp(Payments payments) {
		// Loads the script (the first EVALSHA of the completion fails with NOSCRIPT and
		// is sent again as EVAL) and settles the connection before anything is counted.
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

	/**
	 * Whether the server claims with {@code SET ... NX GET}: Redis 7.0 or later.
	 */
	private static boolean setClaims() {
		Properties info;
		try (RedisConnection connection = statsConnectionFactory.getConnection()) {
			info = connection.serverCommands().info("server");
		}
		String version = info.getProperty("redis_version", "0");
		return Integer.parseInt(version.substring(0, version.indexOf('.'))) >= 7;
	}

	private static Map<String, Long> withoutMeasurement(Map<String, Long> stats) {
		Map<String, Long> commands = new HashMap<>(stats);
		commands.keySet().removeAll(MEASUREMENT);
		return commands;
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
