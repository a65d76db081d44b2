package io.github.idempotent.store.redis;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisScriptingCommands;
import org.springframework.data.redis.connection.RedisStringCommands.SetOption;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.core.types.Expiration;
import org.springframework.util.Assert;

/**
 * The store's Lua scripts ({@code .lua} files next to this class, each saying what it
 * reads, writes and answers), and how its commands reach Redis. Java builds the values
 * the scripts write: a script compares a state byte and a token (bytes 1-9) and writes or
 * returns a value whole; a value of another type fails GET with WRONGTYPE, caught by
 * pcall, so a record costs no TYPE check. Commands go straight on the connection, not
 * through {@code RedisTemplate}, which calls a JDK proxy by reflection on every command.
 */
final class RedisScripts {

	// What the claim script answers first, besides 2 (in progress) and 3 (a value).

	static final long ACQUIRED = 1;

	static final long NOT_A_RECORD = 6;

	static final Script CLAIM = Script.load("claim.lua");

	static final Script COMPLETE = Script.load("complete.lua");

	/** {@link #COMPLETE} flagged for {@link RedisIdempotencyStore#SMALL_RECORD}. */
	static final Script COMPLETE_IN_FULL_MEMORY = COMPLETE.withFlags("allow-oom");

	static final Script RELEASE = Script.load("release.lua");

	static final Script RENEW = Script.load("renew.lua");

	static final Script DELETE_IF = Script.load("delete-if.lua");

	static final Script INSPECT = Script.load("inspect.lua");

	static final Script SCAN = Script.load("scan.lua");

	private final RedisConnectionFactory connectionFactory;

	private final boolean lettuce;

	private @Nullable DedicatedConnections dedicatedConnections;

	RedisScripts(RedisConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
		this.lettuce = RedisClients.isLettuce(connectionFactory);
	}

	/** The damage of a key that holds another Redis type than a string. */
	static String notARecord(@Nullable Object type) {
		String name = (type instanceof byte[] bytes) ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(type);
		return "it is a Redis " + name + ", not a string (WRONGTYPE)";
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
		this.dedicatedConnections = (replicas > 0) ? new DedicatedConnections(this.connectionFactory, replicas, timeout)
				: null;
		if (previous != null) {
			previous.close();
		}
	}

	boolean awaitsReplicas() {
		return this.dedicatedConnections != null;
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
	 * Each command answered before the next; then, if the step wrote and replicas are
	 * awaited, WAIT on the {@link DedicatedConnections dedicated connection} it ran on.
	 */
	<T> CompletableFuture<T> blocking(Function<AsyncRedisCommands, CompletableFuture<T>> step,
			@Nullable Predicate<T> wrote) {
		Function<RedisConnection, T> action = (connection) -> join(step.apply(new ConnectionCommands(connection)));
		DedicatedConnections dedicated = this.dedicatedConnections;
		return answer(() -> {
			if (dedicated == null || wrote == null) {
				try (RedisConnection connection = this.connectionFactory.getConnection()) {
					return action.apply(connection);
				}
			}
			return dedicated.run(action, wrote);
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

	record Script(String name, byte[] text, String sha1) {

		/**
		 * Read once: {@code RedisScript.of(Resource)} would take a lock and check the
		 * resource on every {@code getSha1()}, that is on every call.
		 */
		static Script load(String name) {
			ClassPathResource resource = new ClassPathResource(name, RedisScripts.class);
			try {
				return of(name, resource.getContentAsByteArray());
			}
			catch (IOException ex) {
				throw new IllegalStateException("The Redis script " + resource.getPath()
						+ " is missing from the class path: the idempotent starter's jar is incomplete", ex);
			}
		}

		private static Script of(String name, byte[] text) {
			return new Script(name, text, RedisScript.of(new String(text, StandardCharsets.UTF_8)).getSha1());
		}

		/** With a shebang line that gives it {@code flags} (Redis 7.0 or later). */
		Script withFlags(String flags) {
			String flagged = "#!lua flags=" + flags + "\n" + new String(this.text, StandardCharsets.UTF_8);
			return of(this.name, flagged.getBytes(StandardCharsets.UTF_8));
		}

	}

	/** The store's commands, naming no client, so that it loads without Lettuce. */
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
