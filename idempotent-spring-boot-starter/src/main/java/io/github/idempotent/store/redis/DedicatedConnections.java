package io.github.idempotent.store.redis;

import java.time.Duration;
import java.util.Deque;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Predicate;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.Assert;

/**
 * Lettuce connections of the store's own, each used by one caller at a time, for the
 * writes that are followed by WAIT. WAIT blocks the connection it is sent on until the
 * replicas acknowledge or the timeout passes, and counts only that connection's writes:
 * sent on the application's shared connection, one lagging replica would hold up every
 * command of every thread behind it (claims, renewals, the application's own commands).
 * On a connection of its own, a waiting claim holds up nothing but itself.
 * <p>
 * Connections come from the factory's own {@link RedisClient} and its default URI: the
 * same server (for Sentinel, the primary that Sentinel names, looked up again on every
 * reconnect), credentials, database, TLS, timeout and client options. The pool grows to
 * as many connections as calls wait at once and keeps {@value #MAX_IDLE} open between
 * bursts; a connection that failed is closed, never reused, since a WAIT may still be
 * pending on it.
 * <p>
 * Lettuce only: loaded once {@link RedisClients#isLettuce} has found a Lettuce connection
 * factory (Spring Data Redis has no WAIT, and its generic {@code execute()} cannot read
 * an integer reply on Lettuce).
 */
final class DedicatedConnections implements AutoCloseable {

	// The store's category: the WAIT warnings are the store's to an operator.
	private static final Log logger = LogFactory.getLog(RedisIdempotencyStore.class);

	/**
	 * Idle connections kept open. With replicas answering in about a millisecond, a few
	 * thousand claims a second need only a handful at once.
	 */
	static final int MAX_IDLE = 8;

	private final RedisClient client;

	private final int database;

	private final Deque<StatefulRedisConnection<byte[], byte[]>> idle = new ConcurrentLinkedDeque<>();

	private final AtomicInteger idleCount = new AtomicInteger();

	private volatile boolean closed;

	private DedicatedConnections(RedisClient client, int database) {
		this.client = client;
		this.database = database;
	}

	/**
	 * Dedicated connections to where {@code connectionFactory} connects, which must be a
	 * started {@link LettuceConnectionFactory} for a standalone or Sentinel Redis.
	 */
	static DedicatedConnections of(RedisConnectionFactory connectionFactory) {
		Assert.state(connectionFactory instanceof LettuceConnectionFactory,
				() -> "idempotent.store.redis.wait-replicas needs the Lettuce client (the default of "
						+ "spring-boot-starter-data-redis), not " + connectionFactory.getClass().getName()
						+ "; use Lettuce or set wait-replicas to 0");
		LettuceConnectionFactory lettuce = (LettuceConnectionFactory) connectionFactory;
		AbstractRedisClient client = lettuce.getRequiredNativeClient();
		Assert.state(client instanceof RedisClient,
				"idempotent.store.redis.wait-replicas is not supported on Redis Cluster; set it to 0");
		return new DedicatedConnections((RedisClient) client, lettuce.getDatabase());
	}

	/**
	 * Runs {@code action} on a connection of its own, held by this caller from the action
	 * to the end of its WAIT; then, if {@code wrote} says the action wrote, WAIT for
	 * {@code replicas} replicas or {@code timeout}.
	 */
	<T> T run(Function<RedisConnection, T> action, Predicate<T> wrote, int replicas, Duration timeout) {
		StatefulRedisConnection<byte[], byte[]> nativeConnection = borrow();
		boolean reusable = false;
		try {
			T reply;
			try (RedisConnection connection = asRedisConnection(nativeConnection)) {
				reply = action.apply(connection);
			}
			reusable = !wrote.test(reply) || awaitReplicas(nativeConnection, replicas, timeout);
			return reply;
		}
		finally {
			giveBack(nativeConnection, reusable);
		}
	}

	/**
	 * Sends WAIT on the connection that wrote. The write has happened either way: too few
	 * acknowledgements, or none in time, are logged, not thrown.
	 * @return whether the connection has no command pending any more and can be reused
	 */
	private static boolean awaitReplicas(StatefulRedisConnection<byte[], byte[]> connection, int replicas,
			Duration timeout) {
		RedisFuture<Long> reply = connection.async().waitForReplication(replicas, timeout.toMillis());
		Long acknowledged;
		try {
			// Redis answers WAIT by its timeout; later than that plus a command's timeout
			// it does not answer at all.
			acknowledged = reply.get(timeout.plus(connection.getTimeout()).toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
		catch (ExecutionException | TimeoutException ex) {
			logger.warn("Could not confirm that " + replicas + " Redis replicas have an idempotency record; "
					+ "a failover now could lose it: " + ex);
			return false;
		}
		if (acknowledged != null && acknowledged < replicas) {
			logger.warn("Only " + acknowledged + " of " + replicas + " Redis replicas acknowledged an "
					+ "idempotency record within " + timeout + "; a failover now could lose it");
		}
		return true;
	}

	/**
	 * {@code connection} as Spring Data Redis' connection, for its commands and its
	 * exception translation; closing it leaves {@code connection} open.
	 */
	private RedisConnection asRedisConnection(StatefulRedisConnection<byte[], byte[]> connection) {
		return new LettuceConnection(connection, connection.getTimeout().toMillis(), this.client, this.database);
	}

	private StatefulRedisConnection<byte[], byte[]> borrow() {
		StatefulRedisConnection<byte[], byte[]> connection;
		while ((connection = this.idle.pollFirst()) != null) {
			this.idleCount.decrementAndGet();
			if (connection.isOpen()) {
				return connection;
			}
			connection.close();
		}
		return this.client.connect(ByteArrayCodec.INSTANCE);
	}

	/**
	 * Takes {@code connection} back after use.
	 * @param reusable whether every command sent on it has been answered, so that the
	 * next caller's commands are not queued behind a pending one
	 */
	private void giveBack(StatefulRedisConnection<byte[], byte[]> connection, boolean reusable) {
		if (reusable && !this.closed && connection.isOpen()) {
			if (this.idleCount.incrementAndGet() <= MAX_IDLE) {
				this.idle.offerFirst(connection);
				if (this.closed) {
					// closed meanwhile: its drain may have run before the offer
					close();
				}
				return;
			}
			this.idleCount.decrementAndGet();
		}
		connection.close();
	}

	/**
	 * Keeps connections given back open again after {@link #close()}.
	 */
	void reopen() {
		this.closed = false;
	}

	@Override
	public void close() {
		this.closed = true;
		StatefulRedisConnection<byte[], byte[]> connection;
		while ((connection = this.idle.pollFirst()) != null) {
			this.idleCount.decrementAndGet();
			connection.close();
		}
	}

}
