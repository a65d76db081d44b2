package io.github.idempotent.store.redis;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.idempotent.store.redis.RedisMemoryPolicyGuard.InfoConnection;

/**
 * The {@link RedisMemoryPolicyGuard}'s connection of its own on Lettuce, which tells of
 * every reconnect (a restart, a failover to a differently configured server). Loaded only
 * once {@link RedisClients#isLettuce} has found a Lettuce connection factory.
 */
final class LettuceInfoConnection implements InfoConnection {

	private static final Log logger = LogFactory.getLog(RedisMemoryPolicyGuard.class);

	private final StatefulRedisConnection<String, String> connection;

	private LettuceInfoConnection(StatefulRedisConnection<String, String> connection) {
		this.connection = connection;
	}

	/**
	 * Opens connections to where {@code lettuce} connects, each reporting the server it
	 * reconnected to; {@code null} on Redis Cluster (checked at start-up on every node,
	 * not again after reconnects).
	 */
	static @Nullable Function<Consumer<String>, InfoConnection> connector(RedisConnectionFactory lettuce) {
		AbstractRedisClient client = ((LettuceConnectionFactory) lettuce).getRequiredNativeClient();
		if (!(client instanceof RedisClient redis)) {
			return null;
		}
		return (reconnectedTo) -> open(redis, reconnectedTo);
	}

	private static InfoConnection open(RedisClient redis, Consumer<String> reconnectedTo) {
		StatefulRedisConnection<String, String> opened = redis.connect();
		opened.addListener(new RedisConnectionStateListener() {

			@Override
			public void onRedisConnected(RedisChannelHandler<?, ?> handler, SocketAddress address) {
				// Runs on Lettuce's event loop: what it calls must not block.
				reconnectedTo.accept(serverName(address));
			}

		});
		return new LettuceInfoConnection(opened);
	}

	private static String serverName(SocketAddress address) {
		if (address instanceof InetSocketAddress inet) {
			return inet.getHostString() + ":" + inet.getPort();
		}
		return String.valueOf(address);
	}

	/**
	 * Where {@code lettuce} connects, for messages: host and port, or the primary that
	 * Sentinel names; {@code null} for Redis Cluster.
	 */
	static @Nullable String serverName(RedisConnectionFactory lettuce) {
		LettuceConnectionFactory factory = (LettuceConnectionFactory) lettuce;
		RedisSentinelConfiguration sentinel = factory.getSentinelConfiguration();
		if (sentinel != null && sentinel.getMaster() != null) {
			return "the primary '" + sentinel.getMaster().getName() + "' named by Sentinel";
		}
		if (factory.getClusterConfiguration() == null) {
			return factory.getHostName() + ":" + factory.getPort();
		}
		return null;
	}

	@Override
	public CompletableFuture<String> memoryAndStats() {
		// Two commands: Redis before 7.0 answers one section per INFO.
		RedisAsyncCommands<String, String> commands = this.connection.async();
		return commands.info("memory")
			.thenCombine(commands.info("stats"), (memory, stats) -> memory + "\n" + stats)
			.toCompletableFuture();
	}

	@Override
	public void closeAsync() {
		this.connection.closeAsync();
	}

	@Override
	public void close() {
		try {
			this.connection.closeAsync().get(this.connection.getTimeout().toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			logger.debug("The memory policy connection did not close in time", ex);
		}
	}

}
