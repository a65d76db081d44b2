package io.github.idempotent.store.redis;

import java.util.Deque;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;

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
 */
final class DedicatedConnections implements AutoCloseable {

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
	 * {@code connection} as Spring Data Redis' connection, for its commands and its
	 * exception translation; closing it leaves {@code connection} open.
	 */
	RedisConnection asRedisConnection(StatefulRedisConnection<byte[], byte[]> connection) {
		return new LettuceConnection(connection, connection.getTimeout().toMillis(), this.client, this.database);
	}

	StatefulRedisConnection<byte[], byte[]> borrow() {
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
	void giveBack(StatefulRedisConnection<byte[], byte[]> connection, boolean reusable) {
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
