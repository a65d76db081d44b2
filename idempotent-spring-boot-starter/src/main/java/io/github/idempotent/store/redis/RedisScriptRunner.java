package io.github.idempotent.store.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Predicate;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisScriptingCommands;
import org.springframework.data.redis.connection.ReturnType;

import io.github.idempotent.store.redis.RedisScripts.Script;

/**
 * How the store's commands reach Redis: a script by its SHA-1 (EVALSHA), its text (EVAL)
 * only when the server does not know it yet; over which connection (the application's, or
 * one of the store's own while replicas are awaited, {@link DedicatedConnections});
 * blocking, or through Lettuce's asynchronous commands. Every call is one round trip, and
 * one more (EVAL) only after a restart or a SCRIPT FLUSH.
 * <p>
 * Straight on the connection rather than through {@code RedisTemplate}, which wraps the
 * connection in a JDK proxy and calls it by reflection on every command.
 */
final class RedisScriptRunner {

	// The store's category: the WAIT warnings are the store's to an operator.
	private static final Log logger = LogFactory.getLog(RedisIdempotencyStore.class);

	private final RedisConnectionFactory connectionFactory;

	private int waitReplicas;

	private Duration waitTimeout = Duration.ofMillis(500);

	private @Nullable DedicatedConnections dedicatedConnections;

	RedisScriptRunner(RedisConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
	}

	/**
	 * Makes every write that may be awaited wait (WAIT) until {@code replicas} replicas
	 * have it, or {@code timeout} passes; zero does not wait.
	 */
	void waitReplicas(int replicas, Duration timeout) {
		DedicatedConnections previous = this.dedicatedConnections;
		this.dedicatedConnections = (replicas > 0) ? DedicatedConnections.of(this.connectionFactory) : null;
		this.waitReplicas = replicas;
		this.waitTimeout = timeout;
		if (previous != null) {
			previous.close();
		}
	}

	boolean awaitsReplicas() {
		return this.waitReplicas > 0;
	}

	/**
	 * Closes the connections of the store's own; calls still running meanwhile open and
	 * close their own.
	 */
	void close() {
		DedicatedConnections connections = this.dedicatedConnections;
		if (connections != null) {
			connections.close();
		}
	}

	/**
	 * Keeps connections of the store's own open between calls again after
	 * {@link #close()}.
	 */
	void reopen() {
		DedicatedConnections connections = this.dedicatedConnections;
		if (connections != null) {
			connections.reopen();
		}
	}

	/**
	 * Runs a script on its one key; then, if the script wrote ({@code wrote},
	 * {@code null} for scripts that need no replica) and replicas are awaited, WAIT. WAIT
	 * counts the writes of the connection it is sent on and blocks that connection until
	 * it returns, so a script that may be awaited runs on a dedicated connection, held by
	 * this caller from the script to the end of its WAIT; all others run on the
	 * application's (usually shared) connection.
	 */
	<T> T executeAndWait(Script script, ReturnType returnType, @Nullable Predicate<T> wrote, byte[]... keyAndArgs) {
		return executeAndWait((connection) -> execute(connection, script, returnType, keyAndArgs), wrote);
	}

	/**
	 * Runs {@code action} on the connection {@link #executeAndWait(Script, ReturnType,
	 * Predicate, byte[]...)} would run a script on, then WAIT as it does.
	 */
	<T> T executeAndWait(Function<RedisConnection, T> action, @Nullable Predicate<T> wrote) {
		DedicatedConnections dedicated = this.dedicatedConnections;
		if (dedicated == null || wrote == null) {
			try (RedisConnection connection = this.connectionFactory.getConnection()) {
				return action.apply(connection);
			}
		}
		StatefulRedisConnection<byte[], byte[]> nativeConnection = dedicated.borrow();
		boolean reusable = false;
		try {
			T reply;
			try (RedisConnection connection = dedicated.asRedisConnection(nativeConnection)) {
				reply = action.apply(connection);
			}
			reusable = !wrote.test(reply) || awaitReplicas(nativeConnection);
			return reply;
		}
		finally {
			dedicated.giveBack(nativeConnection, reusable);
		}
	}

	/**
	 * Runs a script by SHA (EVALSHA), sending its text (EVAL) only when the server does
	 * not know it yet, after a restart or a SCRIPT FLUSH.
	 */
	@SuppressWarnings("unchecked")
	static <T> T execute(RedisConnection connection, Script script, ReturnType returnType, byte[]... keyAndArgs) {
		RedisScriptingCommands scripting = connection.scriptingCommands();
		try {
			return (T) scripting.evalSha(script.sha1(), returnType, 1, keyAndArgs);
		}
		catch (RuntimeException ex) {
			if (!isNoScript(ex)) {
				throw ex;
			}
			return (T) scripting.eval(script.text(), returnType, 1, keyAndArgs);
		}
	}

	/**
	 * {@link #executeAndWait} through Lettuce's asynchronous commands: EVALSHA, then EVAL
	 * on NOSCRIPT. The Spring connection is closed once the reply is in, not before: with
	 * a pool, closing it hands the native connection to another caller.
	 */
	<T> CompletableFuture<T> executeAsync(Script script, ScriptOutputType outputType, byte[] key, byte[]... args) {
		byte[][] keys = { key };
		return withAsyncCommands((commands) -> eval(commands, script, outputType, keys, args));
	}

	/**
	 * A script on {@code commands}, which a caller already holds: EVALSHA, then EVAL on
	 * NOSCRIPT.
	 */
	static <T> CompletableFuture<T> eval(RedisClusterAsyncCommands<byte[], byte[]> commands, Script script,
			ScriptOutputType outputType, byte[][] keys, byte[]... args) {
		return commands.<T>evalsha(script.sha1(), outputType, keys, args)
			.toCompletableFuture()
			.exceptionallyCompose((ex) -> isNoScript(ex)
					? commands.<T>eval(script.text(), outputType, keys, args).toCompletableFuture()
					: CompletableFuture.failedFuture(ex));
	}

	/**
	 * Runs {@code action} on Lettuce's asynchronous commands of a connection from the
	 * factory, closed once the reply is in.
	 */
	@SuppressWarnings("unchecked")
	<T> CompletableFuture<T> withAsyncCommands(
			Function<RedisClusterAsyncCommands<byte[], byte[]>, CompletableFuture<T>> action) {
		RedisConnection connection = this.connectionFactory.getConnection();
		CompletableFuture<T> reply;
		try {
			reply = action.apply((RedisClusterAsyncCommands<byte[], byte[]>) connection.getNativeConnection());
		}
		catch (RuntimeException ex) {
			connection.close();
			return CompletableFuture.failedFuture(ex);
		}
		return reply.whenComplete((value, ex) -> connection.close());
	}

	private static boolean isNoScript(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause.getMessage() != null && cause.getMessage().contains("NOSCRIPT")) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Sends WAIT on the connection that wrote (Spring Data Redis has no WAIT, and its
	 * generic execute() cannot read an integer reply). The write has happened either way:
	 * too few acknowledgements, or none in time, are logged, not thrown.
	 * @return whether the connection has no command pending any more and can be reused
	 */
	private boolean awaitReplicas(StatefulRedisConnection<byte[], byte[]> connection) {
		RedisFuture<Long> reply = connection.async().waitForReplication(this.waitReplicas, this.waitTimeout.toMillis());
		Long acknowledged;
		try {
			// Redis answers WAIT by its timeout; later than that plus a command's timeout
			// it does not answer at all.
			acknowledged = reply.get(this.waitTimeout.plus(connection.getTimeout()).toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
		catch (ExecutionException | TimeoutException ex) {
			logger.warn("Could not confirm that " + this.waitReplicas + " Redis replicas have an idempotency record; "
					+ "a failover now could lose it: " + ex);
			return false;
		}
		if (acknowledged != null && acknowledged < this.waitReplicas) {
			logger.warn("Only " + acknowledged + " of " + this.waitReplicas + " Redis replicas acknowledged an "
					+ "idempotency record within " + this.waitTimeout + "; a failover now could lose it");
		}
		return true;
	}

}
