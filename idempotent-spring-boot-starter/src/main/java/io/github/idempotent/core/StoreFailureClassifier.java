package io.github.idempotent.core;

import java.io.IOException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeoutException;

import org.jspecify.annotations.Nullable;

import io.github.idempotent.store.StoreFullException;

/**
 * Tells a store that cannot be reached from a store that answered with a failure: the one
 * decision behind a 503, an unprotected run under {@code failure-mode=open}, and the
 * retries of a completion or release whose answer was lost.
 */
final class StoreFailureClassifier {

	private StoreFailureClassifier() {
	}

	/**
	 * Whether a store failure means the store cannot be reached (a connection refused,
	 * reset or timed out, a pool exhausted, a server that is loading, read-only or out of
	 * memory), as opposed to a failure of the data or of the code. Only the former is
	 * "store unavailable": it answers 503, or runs the method unprotected under
	 * {@code failure-mode=open}, which a malformed request must never be able to cause.
	 * Checked by class name so that the core needs neither Spring's DAO classes nor a
	 * store client.
	 */
	static boolean isUnavailable(Throwable failure) {
		if (isFull(failure)) {
			return true;
		}
		for (Throwable ex = failure; ex != null; ex = ex.getCause()) {
			if (ex instanceof IOException || ex instanceof TimeoutException
					|| ex instanceof IdempotencyStoreUnavailableException) {
				return true;
			}
			for (Class<?> type = ex.getClass(); type != null; type = type.getSuperclass()) {
				if (UNAVAILABLE_TYPES.contains(type.getName())
						|| (REDIS_ERROR_REPLIES.contains(type.getName()) && isPassingRefusal(ex.getMessage()))) {
					return true;
				}
			}
			if (ex.getCause() == ex) {
				break;
			}
		}
		return false;
	}

	/**
	 * An error reply of the server, as Lettuce, Jedis and Redisson throw it (Spring Data
	 * Redis wraps the latter two in an {@code InvalidDataAccessApiUsageException}).
	 */
	private static final Set<String> REDIS_ERROR_REPLIES = Set.of("io.lettuce.core.RedisCommandExecutionException",
			"redis.clients.jedis.exceptions.JedisDataException", "org.redisson.client.RedisException");

	/**
	 * Whether a store failure means the store has no room for a new record: a
	 * {@link StoreFullException}, or Redis's {@code OOM} under
	 * {@code maxmemory-policy noeviction}. A passing refusal like an outage for the
	 * retries of a completion, but never a reason to run a call unprotected: whoever can
	 * fill the store could otherwise turn the protection off.
	 */
	static boolean isFull(Throwable failure) {
		for (Throwable ex = failure; ex != null; ex = ex.getCause()) {
			if (ex instanceof StoreFullException) {
				return true;
			}
			for (Class<?> type = ex.getClass(); type != null; type = type.getSuperclass()) {
				if (REDIS_ERROR_REPLIES.contains(type.getName()) && isRefusal(ex.getMessage(), OUT_OF_MEMORY)) {
					return true;
				}
			}
			if (ex.getCause() == ex) {
				break;
			}
		}
		return false;
	}

	/**
	 * Error replies of a Redis server that refuses writes for a while, not for what was
	 * sent: its memory is full under {@code noeviction} ({@code OOM}), it is a replica or
	 * lost its primary during a failover ({@code READONLY}, {@code MASTERDOWN},
	 * {@code NOREPLICAS}), or a Cluster slot is moving ({@code TRYAGAIN},
	 * {@code CLUSTERDOWN}), or it is loading its data or running a long script
	 * ({@code LOADING}, {@code BUSY}: Lettuce has types of their own for those, Jedis and
	 * Redisson only the message). Inside a script, Redis 6 wraps them as
	 * {@code -OOM ...}.
	 */
	private static final List<String> PASSING_REFUSALS = List.of("OOM ", "READONLY ", "MASTERDOWN ", "NOREPLICAS ",
			"TRYAGAIN ", "CLUSTERDOWN ", "LOADING ", "BUSY ");

	private static final String OUT_OF_MEMORY = "OOM ";

	private static boolean isPassingRefusal(@Nullable String message) {
		for (String refusal : PASSING_REFUSALS) {
			if (isRefusal(message, refusal)) {
				return true;
			}
		}
		return false;
	}

	private static boolean isRefusal(@Nullable String message, String refusal) {
		return message != null && (message.startsWith(refusal) || message.contains("-" + refusal));
	}

	/**
	 * A store that cannot be reached or answer in time. Not contention (Spring's
	 * {@code ConcurrencyFailureException}s, a {@code SQLTransactionRollbackException}): a
	 * store that refused a step because another caller holds the record has been reached
	 * and, by the SPI, answers it as in progress (the JDBC store does, see its
	 * {@code JdbcRefusals}), so a contention that still reaches here is never a reason to
	 * run a call unprotected.
	 */
	private static final Set<String> UNAVAILABLE_TYPES = Set.of("org.springframework.dao.QueryTimeoutException",
			"org.springframework.dao.TransientDataAccessResourceException",
			"org.springframework.dao.DataAccessResourceFailureException",
			"org.springframework.dao.RecoverableDataAccessException",
			"org.springframework.transaction.CannotCreateTransactionException",
			"java.sql.SQLTransientConnectionException", "java.sql.SQLRecoverableException",
			"io.lettuce.core.RedisConnectionException", "io.lettuce.core.RedisCommandTimeoutException",
			"io.lettuce.core.RedisLoadingException", "io.lettuce.core.RedisBusyException");

}
