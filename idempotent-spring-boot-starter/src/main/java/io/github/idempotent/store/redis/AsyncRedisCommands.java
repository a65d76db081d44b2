package io.github.idempotent.store.redis;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.ReturnType;

import io.github.idempotent.store.redis.RedisScripts.Script;

/**
 * The commands the store sends without holding a thread, on one connection: Lettuce's
 * asynchronous API ({@link LettuceCommands}), the only client that Spring Data Redis
 * gives such an API for. Named in no client's types, so that the store's own classes load
 * without Lettuce.
 */
interface AsyncRedisCommands {

	/**
	 * {@code SET key value NX PX millis GET}: the value there was, {@code null} for none.
	 */
	CompletableFuture<byte @Nullable []> setIfAbsentGet(byte[] key, byte[] value, long millis);

	/**
	 * {@code PTTL key}.
	 */
	CompletableFuture<@Nullable Long> pttl(byte[] key);

	/**
	 * {@code INFO memory}: of the server, or of every primary of a cluster.
	 */
	CompletableFuture<List<String>> memoryInfo();

	/**
	 * A script: EVALSHA, then EVAL on NOSCRIPT.
	 */
	<T> CompletableFuture<T> eval(Script script, ReturnType returnType, byte[][] keys, byte[]... args);

}
