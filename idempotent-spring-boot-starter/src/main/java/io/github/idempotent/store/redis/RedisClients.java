package io.github.idempotent.store.redis;

import java.io.IOException;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.ClassUtils;

/**
 * Which Redis client a connection factory runs on, and what its exceptions mean, without
 * naming a client's type: Lettuce-only code lives in classes reached only after
 * {@link #isLettuce} said yes, so that a Jedis or Redisson application never loads them.
 */
final class RedisClients {

	private static final boolean LETTUCE_PRESENT = ClassUtils.isPresent("io.lettuce.core.RedisClient",
			RedisClients.class.getClassLoader());

	private static final Set<String> ERROR_REPLIES = Set.of("io.lettuce.core.RedisCommandExecutionException",
			"redis.clients.jedis.exceptions.JedisDataException", "org.redisson.client.RedisException");

	private static final Set<String> UNANSWERED = Set.of("io.lettuce.core.RedisCommandTimeoutException",
			"redis.clients.jedis.exceptions.JedisConnectionException", "org.redisson.client.RedisTimeoutException",
			"org.redisson.client.WriteRedisConnectionException");

	private RedisClients() {
	}

	static boolean isLettuce(RedisConnectionFactory connectionFactory) {
		return LETTUCE_PRESENT && LettuceCommands.isLettuce(connectionFactory);
	}

	static boolean anyCause(Throwable ex, Predicate<Throwable> test) {
		for (Throwable cause = ex; cause != null; cause = (cause.getCause() != cause) ? cause.getCause() : null) {
			if (test.test(cause)) {
				return true;
			}
		}
		return false;
	}

	static boolean anyMessage(Throwable ex, String... texts) {
		return anyCause(ex,
				(cause) -> cause.getMessage() != null && Arrays.stream(texts).anyMatch(cause.getMessage()::contains));
	}

	/**
	 * An error reply, in {@code ex} or a cause, that starts with one of {@code prefixes}
	 * (a script's: {@code -PREFIX}).
	 */
	static boolean isErrorReply(Throwable ex, String... prefixes) {
		return anyCause(ex, (cause) -> cause.getMessage() != null && isA(cause, ERROR_REPLIES) && Arrays
			.stream(prefixes)
			.anyMatch((prefix) -> cause.getMessage().startsWith(prefix) || cause.getMessage().contains("-" + prefix)));
	}

	/** A command, in {@code ex} or a cause, unanswered: Redis may still run it. */
	static boolean isUnanswered(Throwable ex) {
		return anyCause(ex,
				(cause) -> cause instanceof IOException || isA(cause, UNANSWERED)
						|| (cause.getClass().getName().equals("io.lettuce.core.RedisException")
								&& cause.getMessage() != null && cause.getMessage().startsWith("Connection closed")));
	}

	private static boolean isA(Throwable ex, Set<String> typeNames) {
		for (Class<?> type = ex.getClass(); type != null; type = type.getSuperclass()) {
			if (typeNames.contains(type.getName())) {
				return true;
			}
		}
		return false;
	}

	/**
	 * One daemon thread, ended after 30 s idle, for Redis calls off the caller's path
	 * (the JVM's common pool may not block); a task past {@code capacity} waiting is
	 * dropped.
	 */
	static ThreadPoolExecutor ownThread(String name, int capacity) {
		ThreadPoolExecutor executor = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS,
				new LinkedBlockingQueue<>(capacity), daemon(name), new ThreadPoolExecutor.DiscardPolicy());
		executor.allowCoreThreadTimeOut(true);
		return executor;
	}

	static ThreadFactory daemon(String name) {
		return (task) -> {
			Thread thread = new Thread(task, name);
			thread.setDaemon(true);
			return thread;
		};
	}

	/** Stopped before {@code connectionFactory}, started after it. */
	static int phaseBefore(RedisConnectionFactory connectionFactory) {
		int factoryPhase = (connectionFactory instanceof SmartLifecycle lifecycle) ? lifecycle.getPhase()
				: SmartLifecycle.DEFAULT_PHASE;
		return (factoryPhase == Integer.MAX_VALUE) ? factoryPhase : factoryPhase + 1;
	}

}
