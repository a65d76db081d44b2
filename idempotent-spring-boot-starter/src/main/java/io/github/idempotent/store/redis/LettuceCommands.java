package io.github.idempotent.store.redis;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConverters;
import org.springframework.util.Assert;

import io.github.idempotent.store.redis.RedisIdempotencyStore.ScanStep;
import io.github.idempotent.store.redis.RedisScripts.AsyncRedisCommands;
import io.github.idempotent.store.redis.RedisScripts.Script;

/**
 * {@link AsyncRedisCommands} on Lettuce (standalone, Sentinel and Cluster), and what else
 * the store sends natively on Lettuce.
 */
final class LettuceCommands implements AsyncRedisCommands {

	private final RedisClusterAsyncCommands<byte[], byte[]> commands;

	private LettuceCommands(RedisClusterAsyncCommands<byte[], byte[]> commands) {
		this.commands = commands;
	}

	static boolean isLettuce(RedisConnectionFactory connectionFactory) {
		return connectionFactory instanceof LettuceConnectionFactory;
	}

	/** For messages: host and port, Sentinel's primary, {@code null} on Redis Cluster. */
	static @Nullable String serverName(RedisConnectionFactory lettuce) {
		LettuceConnectionFactory factory = (LettuceConnectionFactory) lettuce;
		RedisSentinelConfiguration sentinel = factory.getSentinelConfiguration();
		if (sentinel != null && sentinel.getMaster() != null) {
			return "the primary '" + sentinel.getMaster().getName() + "' named by Sentinel";
		}
		return (factory.getClusterConfiguration() == null) ? factory.getHostName() + ":" + factory.getPort() : null;
	}

	/** Closes the connection (a pool's: hands it on) after the reply; never throws. */
	@SuppressWarnings("unchecked")
	static <T> CompletableFuture<T> withCommands(RedisConnectionFactory connectionFactory,
			Function<AsyncRedisCommands, CompletableFuture<T>> action) {
		RedisConnection connection = null;
		try {
			connection = connectionFactory.getConnection();
			RedisConnection opened = connection;
			return action
				.apply(new LettuceCommands((RedisClusterAsyncCommands<byte[], byte[]>) opened.getNativeConnection()))
				.whenComplete((value, ex) -> opened.close());
		}
		catch (RuntimeException ex) {
			if (connection != null) {
				connection.close();
			}
			return CompletableFuture.failedFuture(ex);
		}
	}

	/** One SCAN step on a Redis Cluster, from a cursor that names the node. */
	@SuppressWarnings("unchecked")
	static ScanStep scan(Object nativeConnection, byte[] pattern, @Nullable String cursor, int limit) {
		RedisAdvancedClusterAsyncCommands<byte[], byte[]> cluster = (RedisAdvancedClusterAsyncCommands<byte[], byte[]>) nativeConnection;
		List<String> primaries = cluster.getStatefulConnection()
			.getPartitions()
			.stream()
			.filter((node) -> node.is(RedisClusterNode.NodeFlag.UPSTREAM))
			.map(RedisClusterNode::getNodeId)
			.sorted()
			.toList();
		String position = (cursor != null) ? cursor : primaries.get(0) + ":0";
		int colon = position.lastIndexOf(':');
		Assert.isTrue(colon > 0, "Not a cursor of this store: " + position);
		String node = position.substring(0, colon);
		KeyScanCursor<byte[]> scanned = RedisScripts.join(cluster.getConnection(node)
			.scan(ScanCursor.of(position.substring(colon + 1)), new ScanArgs().match(pattern).limit(limit))
			.toCompletableFuture());
		if (!scanned.isFinished()) {
			return new ScanStep(scanned.getKeys(), node + ":" + scanned.getCursor());
		}
		int next = primaries.indexOf(node) + 1;
		return new ScanStep(scanned.getKeys(),
				(next > 0 && next < primaries.size()) ? primaries.get(next) + ":0" : null);
	}

	@Override
	public CompletableFuture<byte @Nullable []> setIfAbsentGet(byte[] key, byte[] value, long millis) {
		return this.commands.setGet(key, value, SetArgs.Builder.nx().px(millis)).toCompletableFuture();
	}

	@Override
	public <T> CompletableFuture<T> eval(Script script, boolean text, ReturnType returnType, byte[][] keys,
			byte[]... args) {
		ScriptOutputType outputType = LettuceConverters.toScriptOutputType(returnType);
		return (text ? this.commands.<T>eval(script.text(), outputType, keys, args)
				: this.commands.<T>evalsha(script.sha1(), outputType, keys, args))
			.toCompletableFuture();
	}

}
