package io.github.idempotent.web;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.test.context.DynamicPropertyRegistry;

import io.github.idempotent.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The store-full tests on a redis-server of the test's own under
 * {@code maxmemory-policy noeviction}, with a {@code maxmemory} 1 MB above what it holds
 * at start (the shared Redis must not run out of memory under the other tests) and new
 * keys refused above 0.75 of it. Filling up during a call goes past the margin too, as
 * writes of another application, or of many instances within one reading of Redis's
 * memory, would: then Redis itself refuses the call's result. Subclasses run on a server
 * of their own, with {@code idempotent.store.redis.claim-memory-limit=0.75},
 * {@code max-duration=5s} and {@code retry-after=3s}, in each failure mode.
 */
abstract class AbstractRedisStoreFullHttpTests extends AbstractStoreFullHttpTests {

	private static final double CLAIM_MEMORY_LIMIT = 0.75;

	private long maxmemory;

	abstract RedisProcess redis();

	/**
	 * Bounds {@code redis}'s memory 1 MB above what it holds, and points the application
	 * at it.
	 */
	static void configure(RedisProcess redis, DynamicPropertyRegistry registry) {
		try (Connection connection = new Connection(redis)) {
			long used = connection.info("used_memory");
			connection.redis().serverCommands().setConfig("maxmemory", Long.toString(used + 1024 * 1024));
		}
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", redis::port);
	}

	/**
	 * Each test starts with an empty store that takes new keys again: once the store has
	 * read Redis's memory anew (at most a second), a probe is not refused.
	 */
	@BeforeEach
	void emptyStore() throws Exception {
		try (Connection connection = new Connection(redis())) {
			connection.redis().serverCommands().flushAll();
		}
		await().atMost(Duration.ofSeconds(10))
			.until(() -> send("alice", "probe-" + UUID.randomUUID(), "P").statusCode() == 201);
	}

	@Override
	int attackerOrderLength() {
		return 2_000;
	}

	@Test
	void newKeysAreRefusedWhileRedisStillHasRoomForTheResultsOfCallsInProgress() throws Exception {
		String run = UUID.randomUUID().toString();
		String firstOrder = randomOrderNo(attackerOrderLength());
		assertThat(send("alice", "attacker-" + run, firstOrder).statusCode()).isEqualTo(201);
		fill(run);
		try (Connection connection = new Connection(redis())) {
			assertThat(connection.info("used_memory")).as("memory in use when new keys are refused")
				.isLessThan(connection.info("maxmemory"));
		}
		HttpResponse<String> victim = send("bob", "victim-" + run, "V-1");
		assertThat(victim.statusCode()).isEqualTo(503);
		assertThat(victim.body()).contains("\"type\":\"urn:idempotent:store-full\"");
		// A key the store holds still replays.
		HttpResponse<String> replay = send("alice", "attacker-" + run, firstOrder);
		assertThat(replay.statusCode()).isEqualTo(201);
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
	}

	/**
	 * Fills Redis with another scope's records up to the share of {@code maxmemory} above
	 * which new keys are refused (written straight to Redis: through the application each
	 * would cost a call), then sends that scope's small keys until the store, which reads
	 * Redis's memory at most once a second, refuses one.
	 */
	@Override
	void fill(String run) throws Exception {
		try (Connection connection = new Connection(redis())) {
			long limit = (long) (CLAIM_MEMORY_LIMIT * connection.info("maxmemory"));
			byte[] record = new byte[16 * 1024];
			for (int i = 0; i < 1_000 && connection.info("used_memory") <= limit; i++) {
				connection.redis()
					.stringCommands()
					.set(("idempotent:alice:filler:" + run + ":" + i).getBytes(StandardCharsets.UTF_8), record);
			}
		}
		int[] probe = { 0 };
		await().atMost(Duration.ofSeconds(30))
			.until(() -> send("alice", "probe-" + run + "-" + probe[0]++, "P").statusCode() == 503);
	}

	/**
	 * Fills Redis past the margin until Redis itself refuses writes ({@code OOM}), as
	 * another application, or many instances within one reading of Redis's memory, would;
	 * then lowers {@code maxmemory} 256 KB below what Redis uses, so that buffers Redis
	 * frees afterwards (the filling connection's) do not let a write in again.
	 */
	@Override
	void fillWhileACallRuns(String run) throws Exception {
		try (Connection connection = new Connection(redis())) {
			this.maxmemory = connection.info("maxmemory");
			byte[] filler = new byte[64 * 1024];
			for (int i = 0; i < 1_000; i++) {
				try {
					connection.redis()
						.stringCommands()
						.set(("idempotent:alice:filler:" + run + ":" + i).getBytes(StandardCharsets.UTF_8), filler);
				}
				catch (RuntimeException ex) {
					assertThat(ex).hasStackTraceContaining("OOM");
					connection.redis()
						.serverCommands()
						.setConfig("maxmemory", Long.toString(connection.info("used_memory") - 256 * 1024));
					return;
				}
			}
		}
		throw new AssertionError("Redis took 64 MB under a maxmemory of about 2 MB");
	}

	/**
	 * Deletes the other scope's records and gives Redis its {@code maxmemory} back.
	 */
	@Override
	void makeRoom() {
		try (Connection connection = new Connection(redis())) {
			Set<byte[]> keys = connection.redis().keyCommands().keys("*:alice:*".getBytes(StandardCharsets.UTF_8));
			if (keys != null && !keys.isEmpty()) {
				connection.redis().keyCommands().del(keys.toArray(new byte[0][]));
			}
			if (this.maxmemory > 0) {
				connection.redis().serverCommands().setConfig("maxmemory", Long.toString(this.maxmemory));
			}
		}
	}

	/**
	 * On Redis the result the store refused is not stored, and the call keeps its key:
	 * every retry, while full and after room is made, gets the error that says so.
	 */
	@Override
	void assertRetryOfACallThatRan(HttpResponse<String> retry, CapturedOutput output) {
		assertNotStored(retry, output);
	}

	/**
	 * A connection of the test's own to the private Redis.
	 */
	static final class Connection implements AutoCloseable {

		private final LettuceConnectionFactory factory;

		private final RedisConnection connection;

		Connection(RedisProcess redis) {
			this.factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", redis.port()));
			this.factory.afterPropertiesSet();
			this.factory.start();
			this.connection = this.factory.getConnection();
		}

		RedisConnection redis() {
			return this.connection;
		}

		long info(String name) {
			return Long.parseLong(this.connection.serverCommands().info("memory").getProperty(name));
		}

		@Override
		public void close() {
			this.connection.close();
			this.factory.destroy();
		}

	}

}
