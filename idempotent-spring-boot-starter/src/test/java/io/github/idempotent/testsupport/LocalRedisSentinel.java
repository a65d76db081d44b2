package io.github.idempotent.testsupport;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;

/**
 * A primary, one replica and one sentinel on loopback, each a {@link RedisProcess}. The
 * sentinel declares the primary down after 1 s without answer and fails over on its own
 * (quorum 1).
 */
public final class LocalRedisSentinel implements AutoCloseable {

	public static final String MASTER_NAME = "idempotent";

	private RedisProcess primary;

	private RedisProcess replica;

	private RedisProcess sentinel;

	private LocalRedisSentinel() {
	}

	public static LocalRedisSentinel start() {
		return start(new String[0]);
	}

	/**
	 * Starts a primary, a replica with the given configuration lines besides replicaof (a
	 * failover may land on a differently configured server) and a sentinel.
	 */
	public static LocalRedisSentinel start(String... replicaConfig) {
		LocalRedisSentinel setup = new LocalRedisSentinel();
		try {
			setup.primary = RedisProcess.start(RedisProcess.freePort(), false);
			List<String> replicaLines = new ArrayList<>(List.of("replicaof 127.0.0.1 " + setup.primary.port()));
			replicaLines.addAll(List.of(replicaConfig));
			setup.replica = RedisProcess.start(RedisProcess.freePort(), false, replicaLines.toArray(String[]::new));
			setup.sentinel = RedisProcess.start(RedisProcess.freePort(), true,
					"sentinel monitor " + MASTER_NAME + " 127.0.0.1 " + setup.primary.port() + " 1",
					"sentinel down-after-milliseconds " + MASTER_NAME + " 1000",
					"sentinel failover-timeout " + MASTER_NAME + " 5000");
			setup.awaitReplicaInSync();
			await("sentinel sees the replica", Duration.SECONDS_10,
					() -> setup.withSentinel((sentinel) -> !sentinel.sync().replicas(MASTER_NAME).isEmpty()));
			return setup;
		}
		catch (RuntimeException ex) {
			setup.close();
			throw ex;
		}
	}

	/**
	 * Waits until the primary reports its replica online.
	 */
	public void awaitReplicaInSync() {
		await("replica in sync", Duration.SECONDS_10, () -> withServer(this.primary.port(),
				(redis) -> redis.sync().info("replication").contains("state=online")));
	}

	/**
	 * The sentinel as {@code spring.data.redis.sentinel.nodes} takes it.
	 */
	public String sentinelNodes() {
		return "127.0.0.1:" + this.sentinel.port();
	}

	public int primaryPort() {
		return this.primary.port();
	}

	public int replicaPort() {
		return this.replica.port();
	}

	/**
	 * The port of the primary as the sentinel currently names it.
	 */
	public int currentPrimaryPort() {
		SocketAddress address = withSentinel((sentinel) -> sentinel.sync().getMasterAddrByName(MASTER_NAME));
		return ((InetSocketAddress) address).getPort();
	}

	/**
	 * Kills the primary, as a crash would, and waits until the sentinel has promoted the
	 * replica and the replica accepts writes.
	 * @return milliseconds from the kill to the promoted replica accepting writes
	 */
	public long crashPrimaryAndAwaitFailover() {
		long start = System.nanoTime();
		this.primary.kill();
		await("failover to the replica", Duration.SECONDS_30,
				() -> currentPrimaryPort() == this.replica.port() && withServer(this.replica.port(),
						(redis) -> redis.sync().info("replication").contains("role:master")));
		return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
	}

	/**
	 * Makes the replica stop answering for {@code millis} (DEBUG SLEEP), as a slow or
	 * partitioned replica would; returns 100 ms after the command was sent, so that the
	 * replica is asleep by then.
	 * @return the thread that waits for the sleep to end and closes its connection
	 */
	public Thread pauseReplica(long millis) {
		// Connected here, before the clock of the caller's measurement starts: creating a
		// client and connecting can take longer than the grace below on a loaded machine,
		// and a DEBUG SLEEP sent late lets the replica acknowledge what it should not
		// yet.
		RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", this.replica.port()));
		StatefulRedisConnection<String, String> connection = client.connect();
		CommandArgs<String, String> args = new CommandArgs<>(StringCodec.UTF8).add("SLEEP")
			.add(Double.toString(millis / 1000.0));
		RedisFuture<String> reply = connection.async()
			.dispatch(CommandType.DEBUG, new StatusOutput<>(StringCodec.UTF8), args);
		Thread sleeper = new Thread(() -> {
			try {
				reply.get(millis + 10_000, TimeUnit.MILLISECONDS);
			}
			catch (Exception ex) {
				// the replica is awake again either way, or the test has failed already
			}
			finally {
				connection.close();
				client.shutdown(0, 2, TimeUnit.SECONDS);
			}
		}, "replica-sleep");
		sleeper.setDaemon(true);
		sleeper.start();
		RedisProcess.sleep(100);
		return sleeper;
	}

	private <T> T withServer(int port, Function<StatefulRedisConnection<String, String>, T> action) {
		RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", port));
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			return action.apply(connection);
		}
		finally {
			client.shutdown(0, 2, TimeUnit.SECONDS);
		}
	}

	private <T> T withSentinel(Function<StatefulRedisSentinelConnection<String, String>, T> action) {
		RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", this.sentinel.port()));
		try (StatefulRedisSentinelConnection<String, String> connection = client.connectSentinel()) {
			return action.apply(connection);
		}
		finally {
			client.shutdown(0, 2, TimeUnit.SECONDS);
		}
	}

	private static void await(String what, Duration timeout, BooleanSupplier condition) {
		RedisProcess.await(what, java.time.Duration.ofSeconds(timeout.seconds), 100, condition);
	}

	@Override
	public void close() {
		for (RedisProcess process : new RedisProcess[] { this.sentinel, this.replica, this.primary }) {
			if (process != null) {
				process.close();
			}
		}
	}

	private enum Duration {

		SECONDS_10(10), SECONDS_30(30);

		private final int seconds;

		Duration(int seconds) {
			this.seconds = seconds;
		}

	}

}
