package io.github.idempotent.store.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisScriptingCommands;
import org.springframework.data.redis.connection.RedisStringCommands.SetOption;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.core.types.Expiration;
import org.springframework.util.Assert;

import io.github.idempotent.store.redis.RedisScripts.Script;

/**
 * How the store's commands reach Redis: scripts by SHA-1 (EVALSHA, then EVAL after a
 * restart or SCRIPT FLUSH), on the application's connection or, while replicas are
 * awaited, one of the store's own ({@link DedicatedConnections}); blocking, or through
 * Lettuce's asynchronous commands. Straight on the connection rather than through
 * {@code RedisTemplate}, which calls a JDK proxy by reflection on every command.
 */
final class RedisScriptRunner {

	private final RedisConnectionFactory connectionFactory;

	private final boolean lettuce;

	private int waitReplicas;

	private Duration waitTimeout = Duration.ofMillis(500);

	private @Nullable DedicatedConnections dedicatedConnections;

	RedisScriptRunner(RedisConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
		this.lettuce = RedisClients.isLettuce(connectionFactory);
	}

	boolean supportsAsync() {
		return this.lettuce;
	}

	void waitReplicas(int replicas, Duration timeout) {
		Assert.state(replicas == 0 || this.lettuce,
				() -> "idempotent.store.redis.wait-replicas needs the Lettuce client (the default of "
						+ "spring-boot-starter-data-redis), not " + this.connectionFactory.getClass().getName()
						+ "; use Lettuce or set wait-replicas to 0");
		DedicatedConnections previous = this.dedicatedConnections;
		this.dedicatedConnections = (replicas > 0) ? new DedicatedConnections(this.connectionFactory) : null;
		this.waitReplicas = replicas;
		this.waitTimeout = timeout;
		if (previous != null) {
			previous.close();
		}
	}

	boolean awaitsReplicas() {
		return this.waitReplicas > 0;
	}

	void close() {
		DedicatedConnections connections = this.dedicatedConnections;
		if (connections != null) {
			connections.close();
		}
	}

	void reopen() {
		DedicatedConnections connections = this.dedicatedConnections;
		if (connections != null) {
			connections.reopen();
		}
	}

	/**
	 * A step of the store written once against {@link AsyncRedisCommands}:
	 * {@link #blocking} or {@link #async}.
	 */
	interface Commands {

		<T> CompletableFuture<T> run(Function<AsyncRedisCommands, CompletableFuture<T>> step,
				@Nullable Predicate<T> wrote);

	}

	/**
	 * Each command answered before the next; then WAIT if the step wrote and replicas are
	 * awaited. WAIT counts the writes of the connection it is sent on, so such a step
	 * runs on a dedicated connection held from the step to the end of its WAIT.
	 */
	<T> CompletableFuture<T> blocking(Function<AsyncRedisCommands, CompletableFuture<T>> step,
			@Nullable Predicate<T> wrote) {
		Function<RedisConnection, T> action = (connection) -> join(step.apply(new ConnectionCommands(connection)));
		return answer(() -> {
			DedicatedConnections dedicated = this.dedicatedConnections;
			if (dedicated == null || wrote == null) {
				try (RedisConnection connection = this.connectionFactory.getConnection()) {
					return action.apply(connection);
				}
			}
			return dedicated.run(action, wrote, this.waitReplicas, this.waitTimeout);
		});
	}

	/** Never WAIT: the store is asynchronous only while no replica is awaited. */
	<T> CompletableFuture<T> async(Function<AsyncRedisCommands, CompletableFuture<T>> step,
			@Nullable Predicate<T> wrote) {
		Assert.state(this.lettuce, "Asynchronous Redis commands need the Lettuce client");
		return LettuceCommands.withCommands(this.connectionFactory, step);
	}

	/** The value of a {@link #blocking} future, its failure thrown as raised. */
	static <T> T join(CompletableFuture<T> future) {
		try {
			return future.join();
		}
		catch (CompletionException ex) {
			if (ex.getCause() instanceof RuntimeException cause) {
				throw cause;
			}
			throw ex;
		}
	}

	private static <T> CompletableFuture<T> answer(Supplier<T> command) {
		try {
			return CompletableFuture.completedFuture(command.get());
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	static <T> T eval(RedisConnection connection, Script script, ReturnType returnType, byte[][] keys, byte[]... args) {
		return join(new ConnectionCommands(connection).eval(script, returnType, keys, args));
	}

	/**
	 * The commands the store sends without holding a thread ({@link LettuceCommands});
	 * names no client's type, so that the store loads without Lettuce.
	 */
	interface AsyncRedisCommands {

		/** {@code SET key value NX PX millis GET}: the value there was, or null. */
		CompletableFuture<byte @Nullable []> setIfAbsentGet(byte[] key, byte[] value, long millis);

		/** EVALSHA, or EVAL of the script's {@code text}. */
		<T> CompletableFuture<T> eval(Script script, boolean text, ReturnType returnType, byte[][] keys,
				byte[]... args);

		/** EVALSHA, then EVAL on NOSCRIPT (after a restart or SCRIPT FLUSH). */
		default <T> CompletableFuture<T> eval(Script script, ReturnType returnType, byte[][] keys, byte[]... args) {
			return this.<T>eval(script, false, returnType, keys, args)
				.exceptionallyCompose((ex) -> RedisClients.anyMessage(ex, "NOSCRIPT")
						? this.<T>eval(script, true, returnType, keys, args) : CompletableFuture.failedFuture(ex));
		}

	}

	private record ConnectionCommands(RedisConnection connection) implements AsyncRedisCommands {

		@Override
		public CompletableFuture<byte @Nullable []> setIfAbsentGet(byte[] key, byte[] value, long millis) {
			return answer(() -> this.connection.stringCommands()
				.setGet(key, value, Expiration.milliseconds(millis), SetOption.SET_IF_ABSENT));
		}

		@Override
		public <T> CompletableFuture<T> eval(Script script, boolean text, ReturnType returnType, byte[][] keys,
				byte[]... args) {
			byte[][] keysAndArgs = new byte[keys.length + args.length][];
			System.arraycopy(keys, 0, keysAndArgs, 0, keys.length);
			System.arraycopy(args, 0, keysAndArgs, keys.length, args.length);
			RedisScriptingCommands scripting = this.connection.scriptingCommands();
			return answer(() -> text ? scripting.<T>eval(script.text(), returnType, keys.length, keysAndArgs)
					: scripting.<T>evalSha(script.sha1(), returnType, keys.length, keysAndArgs));
		}

	}

}
