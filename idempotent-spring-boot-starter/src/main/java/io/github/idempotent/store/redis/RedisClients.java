package io.github.idempotent.store.redis;

import java.util.Set;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.ClassUtils;

/**
 * Which Redis client a connection factory runs on, and what the store reads from each
 * client's exceptions, without naming a type of any client: Spring Data Redis serves
 * Lettuce, Jedis and (through its own module) Redisson behind
 * {@link RedisConnectionFactory}, and an application has only the one it uses on its
 * class path. What only Lettuce can do lives in classes of their own ({@code Lettuce*},
 * {@link DedicatedConnections}, {@link RedisRecordTracking}), reached only after
 * {@link #isLettuce} said yes, so that no other client's application ever loads them.
 */
final class RedisClients {

	private static final boolean LETTUCE_PRESENT = ClassUtils.isPresent("io.lettuce.core.RedisClient",
			RedisClients.class.getClassLoader());

	/**
	 * Exceptions that carry an error reply of the server, of Lettuce, Jedis and Redisson.
	 */
	private static final Set<String> ERROR_REPLIES = Set.of("io.lettuce.core.RedisCommandExecutionException",
			"redis.clients.jedis.exceptions.JedisDataException", "org.redisson.client.RedisException");

	/**
	 * Exceptions of a command whose answer never came (a timeout, a connection that broke
	 * with it on its way), of Lettuce, Jedis and Redisson: Redis may still run it.
	 */
	private static final Set<String> UNANSWERED = Set.of("io.lettuce.core.RedisCommandTimeoutException",
			"redis.clients.jedis.exceptions.JedisConnectionException", "org.redisson.client.RedisTimeoutException",
			"org.redisson.client.WriteRedisConnectionException");

	private RedisClients() {
	}

	/**
	 * Whether {@code connectionFactory} is Spring Data Redis's Lettuce factory, checked
	 * without loading it when Lettuce is absent.
	 */
	static boolean isLettuce(RedisConnectionFactory connectionFactory) {
		return LETTUCE_PRESENT && LettuceCommands.isLettuce(connectionFactory);
	}

	/**
	 * Whether {@code ex} is an error reply of the server whose message starts with one of
	 * {@code prefixes} (or holds it as a script's {@code -PREFIX} error).
	 */
	static boolean isErrorReply(Throwable ex, String... prefixes) {
		String message = ex.getMessage();
		if (message == null || !isA(ex, ERROR_REPLIES)) {
			return false;
		}
		for (String prefix : prefixes) {
			if (message.startsWith(prefix) || message.contains("-" + prefix)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Whether {@code ex} is a command's timeout or a connection that broke under it.
	 */
	static boolean isUnanswered(Throwable ex) {
		return isA(ex, UNANSWERED) || (ex.getClass().getName().equals("io.lettuce.core.RedisException")
				&& ex.getMessage() != null && ex.getMessage().startsWith("Connection closed"));
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
	 * The lifecycle phase just before {@code connectionFactory}'s: stopped first, started
	 * after it.
	 */
	static int phaseBefore(RedisConnectionFactory connectionFactory) {
		int factoryPhase = (connectionFactory instanceof SmartLifecycle lifecycle) ? lifecycle.getPhase()
				: SmartLifecycle.DEFAULT_PHASE;
		return (factoryPhase == Integer.MAX_VALUE) ? factoryPhase : factoryPhase + 1;
	}

}
