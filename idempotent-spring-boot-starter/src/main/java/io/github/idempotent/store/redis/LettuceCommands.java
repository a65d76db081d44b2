package io.github.idempotent.store.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.idempotent.store.redis.RedisScripts.Script;

/** {@link AsyncRedisCommands} on Lettuce (standalone, Sentinel and Cluster). */
final class LettuceCommands implements AsyncRedisCommands {

	private final RedisClusterAsyncCommands<byte[], byte[]> commands;

	private LettuceCommands(RedisClusterAsyncCommands<byte[], byte[]> commands) {
		this.commands = commands;
	}

	static boolean isLettuce(RedisConnectionFactory connectionFactory) {
		return connectionFactory instanceof LettuceConnectionFactory;
	}

	/**
	 * For messages: host and port, Sentinel's primary, or {@code null} for Redis Cluster.
	 */
	static @Nullable String serverName(RedisConnectionFactory lettuce) {
		LettuceConnectionFactory factory = (LettuceConnectionFactory) lettuce;
		RedisSentinelConfiguration sentinel = factory.getSentinelConfiguration();
		if (sentinel != null && sentinel.getMaster() != null) {
			return "the primary '" + sentinel.getMaster().getName() + "' named by Sentinel";
		}
		return (factory.getClusterConfiguration() == null) ? factory.getHostName() + ":" + factory.getPort() : null;
	}

	/**
	 * The connection is closed once the reply is in: with a pool, closing hands it on.
	 */
	@SuppressWarnings("unchecked")
	static <T> CompletableFuture<T> withCommands(RedisConnectionFactory connectionFactory,
			Function<AsyncRedisCommands, CompletableFuture<T>> action) {
		RedisConnection connection = connectionFactory.getConnection();
		CompletableFuture<T> reply;
		try {
			reply = action.apply(
					new LettuceCommands((RedisClusterAsyncCommands<byte[], byte[]>) connection.getNativeConnection()));
		}
		catch (RuntimeException ex) {
			connection.close();
			return CompletableFuture.failedFuture(ex);
		}
		return reply.whenComplete((value, ex) -> connection.close());
	}

	@Override
	public CompletableFuture<byte @Nullable []> setIfAbsentGet(byte[] key, byte[] value, long millis) {
		return this.commands.setGet(key, value, SetArgs.Builder.nx().px(millis)).toCompletableFuture();
	}

	@Override
	public CompletableFuture<List<String>> memoryInfo() {
		if (this.commands instanceof RedisAdvancedClusterAsyncCommands<byte[], byte[]> cluster) {
			List<CompletableFuture<String>> nodes = new ArrayList<>();
			cluster.upstream().commands().info("memory").forEach((node) -> nodes.add(node.toCompletableFuture()));
			return CompletableFuture.allOf(nodes.toArray(new CompletableFuture<?>[0]))
				.thenApply((all) -> nodes.stream().map(CompletableFuture::join).toList());
		}
		return this.commands.info("memory").toCompletableFuture().thenApply(List::of);
	}

	@Override
	public <T> CompletableFuture<T> eval(Script script, ReturnType returnType, byte[][] keys, byte[]... args) {
		ScriptOutputType outputType = outputType(returnType);
		return this.commands.<T>evalsha(script.sha1(), outputType, keys, args)
			.toCompletableFuture()
			.exceptionallyCompose((ex) -> RedisScriptRunner.isNoScript(ex)
					? this.commands.<T>eval(script.text(), outputType, keys, args).toCompletableFuture()
					: CompletableFuture.failedFuture(ex));
	}

	private static ScriptOutputType outputType(ReturnType returnType) {
		return switch (returnType) {
			case BOOLEAN -> ScriptOutputType.BOOLEAN;
			case INTEGER -> ScriptOutputType.INTEGER;
			case MULTI -> ScriptOutputType.MULTI;
			case STATUS -> ScriptOutputType.STATUS;
			case VALUE -> ScriptOutputType.VALUE;
		};
	}

}
