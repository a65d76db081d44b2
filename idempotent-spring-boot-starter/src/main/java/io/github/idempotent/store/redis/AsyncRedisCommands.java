package io.github.idempotent.store.redis;

import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.ReturnType;

import io.github.idempotent.store.redis.RedisScripts.Script;

/**
 * The commands the store sends without holding a thread ({@link LettuceCommands}); names
 * no client's type, so that the store loads without Lettuce.
 */
interface AsyncRedisCommands {

	/**
	 * {@code SET key value NX PX millis GET}: the value there was, {@code null} for none.
	 */
	CompletableFuture<byte @Nullable []> setIfAbsentGet(byte[] key, byte[] value, long millis);

	/** EVALSHA, then EVAL on NOSCRIPT. */
	<T> CompletableFuture<T> eval(Script script, ReturnType returnType, byte[][] keys, byte[]... args);

}
