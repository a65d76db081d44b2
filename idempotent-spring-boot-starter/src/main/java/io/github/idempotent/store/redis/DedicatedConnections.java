package io.github.idempotent.store.redis;

import java.time.Duration;
import java.util.concurrent.BlockingDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Predicate;

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
 * Lettuce connections of the store's own, one caller at a time, for the writes followed
 * by WAIT, which counts only the writes of its connection and blocks it: on the shared
 * connection a lagging replica would hold up every command. A connection that failed is
 * closed, never reused: a WAIT may still be pending.
 */
final class DedicatedConnections implements AutoCloseable {

	// The store's category: the WAIT warnings are the store's to an operator.
	private static final Log logger = LogFactory.getLog(RedisIdempotencyStore.class);

	private final RedisClient client;

	private final int database;

	private final int replicas;

	private final Duration timeout;

	private final BlockingDeque<StatefulRedisConnection<byte[], byte[]>> idle = new LinkedBlockingDeque<>(8);

	private volatile boolean closed;

	DedicatedConnections(RedisConnectionFactory connectionFactory, int replicas, Duration timeout) {
		LettuceConnectionFactory lettuce = (LettuceConnectionFactory) connectionFactory;
		Assert.state(lettuce.getRequiredNativeClient() instanceof RedisClient,
				"idempotent.store.redis.wait-replicas is not supported on Redis Cluster; set it to 0");
		this.client = (RedisClient) lettuce.getRequiredNativeClient();
		this.database = lettuce.getDatabase();
		this.replicas = replicas;
		this.timeout = timeout;
	}

	<T> T run(Function<RedisConnection, T> action, Predicate<T> wrote) {
		StatefulRedisConnection<byte[], byte[]> nativeConnection;
		while ((nativeConnection = this.idle.pollFirst()) != null && !nativeConnection.isOpen()) {
			nativeConnection.close();
		}
		if (nativeConnection == null) {
			nativeConnection = this.client.connect(ByteArrayCodec.INSTANCE);
		}
		boolean reusable = false;
		try {
			T reply;
			// Closing the LettuceConnection leaves the native connection open.
			try (RedisConnection connection = new LettuceConnection(nativeConnection,
					nativeConnection.getTimeout().toMillis(), this.client, this.database)) {
				reply = action.apply(connection);
			}
			reusable = !wrote.test(reply) || awaitReplicas(nativeConnection);
			return reply;
		}
		finally {
			giveBack(nativeConnection, reusable);
		}
	}

	/**
	 * Too few acknowledgements are logged, not thrown: the write has happened.
	 * @return whether the connection has no command pending and can be reused
	 */
	private boolean awaitReplicas(StatefulRedisConnection<byte[], byte[]> connection) {
		RedisFuture<Long> reply = connection.async().waitForReplication(this.replicas, this.timeout.toMillis());
		Long acknowledged;
		try {
			// Past its timeout plus a command's timeout, WAIT does not answer at all.
			acknowledged = reply.get(this.timeout.plus(connection.getTimeout()).toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
		catch (ExecutionException | TimeoutException ex) {
			logger.warn("Could not confirm that " + this.replicas + " Redis replicas have an idempotency record; "
					+ "a failover now could lose it: " + ex);
			return false;
		}
		if (acknowledged != null && acknowledged < this.replicas) {
			logger.warn("Only " + acknowledged + " of " + this.replicas + " Redis replicas acknowledged an "
					+ "idempotency record within " + this.timeout + "; a failover now could lose it");
		}
		return true;
	}

	/** {@code reusable}: every command sent on it has been answered. */
	private void giveBack(StatefulRedisConnection<byte[], byte[]> connection, boolean reusable) {
		if (reusable && !this.closed && connection.isOpen() && this.idle.offerFirst(connection)) {
			if (this.closed) {
				// closed meanwhile: its drain may have run before the offer
				close();
			}
			return;
		}
		connection.close();
	}

	void reopen() {
		this.closed = false;
	}

	@Override
	public void close() {
		this.closed = true;
		StatefulRedisConnection<byte[], byte[]> connection;
		while ((connection = this.idle.pollFirst()) != null) {
			connection.close();
		}
	}

}
