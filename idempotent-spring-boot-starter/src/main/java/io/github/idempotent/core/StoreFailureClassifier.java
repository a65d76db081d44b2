package io.github.idempotent.core;

import java.io.IOException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import java.util.function.BiPredicate;

import org.jspecify.annotations.Nullable;

import io.github.idempotent.store.StoreFullException;

/**
 * Tells a store that cannot be reached from one that answered with a failure: the one
 * decision behind a 503, {@code failure-mode=open}, and the retries of a step.
 */
final class StoreFailureClassifier {

	private StoreFailureClassifier() {
	}

	/**
	 * Only a store that cannot be reached, never a failure of the data or the code, may
	 * run a method unprotected. By class name: the core needs no store client.
	 */
	static boolean isUnavailable(Throwable failure) {
		return isFull(failure) || anyCause(failure, (ex, type) -> ex instanceof IOException
				|| ex instanceof TimeoutException || ex instanceof IdempotencyStoreUnavailableException
				|| UNAVAILABLE_TYPES.contains(type) || (REDIS_ERROR_REPLIES.contains(type)
						&& PASSING_REFUSALS.stream().anyMatch((refusal) -> isRefusal(ex.getMessage(), refusal))));
	}

	/** A server's error reply, as Lettuce, Jedis and Redisson throw it. */
	private static final Set<String> REDIS_ERROR_REPLIES = Set.of("io.lettuce.core.RedisCommandExecutionException",
			"redis.clients.jedis.exceptions.JedisDataException", "org.redisson.client.RedisException");

	/** No room for a record: retried like an outage, never run unprotected. */
	static boolean isFull(Throwable failure) {
		return anyCause(failure, (ex, type) -> ex instanceof StoreFullException
				|| (REDIS_ERROR_REPLIES.contains(type) && isRefusal(ex.getMessage(), "OOM ")));
	}

	private static boolean anyCause(Throwable failure, BiPredicate<Throwable, String> test) {
		for (Throwable ex = failure; ex != null; ex = (ex.getCause() != ex) ? ex.getCause() : null) {
			for (Class<?> type = ex.getClass(); type != null; type = type.getSuperclass()) {
				if (test.test(ex, type.getName())) {
					return true;
				}
			}
		}
		return false;
	}

	/**
	 * A Redis that refuses writes for a while, not for what was sent: memory full, a
	 * failover, a moving Cluster slot, loading, a long script. Inside a script, Redis 6
	 * wraps them as {@code -OOM ...}.
	 */
	private static final List<String> PASSING_REFUSALS = List.of("OOM ", "READONLY ", "MASTERDOWN ", "NOREPLICAS ",
			"TRYAGAIN ", "CLUSTERDOWN ", "LOADING ", "BUSY ");

	private static boolean isRefusal(@Nullable String message, String refusal) {
		return message != null && (message.startsWith(refusal) || message.contains("-" + refusal));
	}

	/** Not contention: a store that found the record held answers it as in progress. */
	private static final Set<String> UNAVAILABLE_TYPES = Set.of("org.springframework.dao.QueryTimeoutException",
			"org.springframework.dao.TransientDataAccessResourceException",
			"org.springframework.dao.DataAccessResourceFailureException",
			"org.springframework.dao.RecoverableDataAccessException",
			"org.springframework.transaction.CannotCreateTransactionException",
			"java.sql.SQLTransientConnectionException", "java.sql.SQLRecoverableException",
			"io.lettuce.core.RedisConnectionException", "io.lettuce.core.RedisCommandTimeoutException",
			"io.lettuce.core.RedisLoadingException", "io.lettuce.core.RedisBusyException");

}
