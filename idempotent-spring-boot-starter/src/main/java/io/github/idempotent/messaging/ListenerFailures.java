package io.github.idempotent.messaging;

import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.idempotent.core.IdempotencyException;
import io.github.idempotent.core.IdempotencyExpressionException;
import io.github.idempotent.core.IdempotencyInProgressException;
import io.github.idempotent.core.IdempotencyKeyException;
import io.github.idempotent.core.IdempotencyKeyReusedException;
import io.github.idempotent.core.IdempotencyPayloadException;
import io.github.idempotent.core.IdempotencyResultException;
import io.github.idempotent.core.IdempotencyStoreUnavailableException;

/**
 * How a broker should treat a listener failure raised by {@code @Idempotent}, found
 * anywhere in the cause chain (containers wrap it in their own exceptions):
 * <ul>
 * <li>{@link IdempotencyInProgressException}: a duplicate arrived while the first
 * delivery was still being processed. Retryable, and never dead-lettered for that alone:
 * once the first completes, the redelivery is acknowledged without running.
 * <li>{@link #NOT_RETRYABLE}: the key was reused with another payload, the message has no
 * key or a malformed one, its payload cannot be fingerprinted, or a key expression cannot
 * be evaluated against it; or the key's stored result cannot be returned
 * ({@link IdempotencyResultException}: its record is damaged, or its result was not
 * storable or no longer decodes), while the listener must not run again for it. Every
 * redelivery would fail the same way, so the message goes to the dead-letter path at
 * once.
 * </ul>
 */
public final class ListenerFailures {

	/**
	 * Failures that no redelivery can fix.
	 */
	public static final List<Class<? extends Exception>> NOT_RETRYABLE = List.of(IdempotencyKeyReusedException.class,
			IdempotencyKeyException.class, IdempotencyPayloadException.class, IdempotencyExpressionException.class,
			IdempotencyResultException.class);

	private ListenerFailures() {
	}

	/**
	 * The in-progress refusal in the cause chain of {@code failure}, if any.
	 */
	public static @Nullable IdempotencyInProgressException inProgress(@Nullable Throwable failure) {
		return find(failure, IdempotencyInProgressException.class);
	}

	/**
	 * The store outage refusal ({@code failure-mode=closed}) in the cause chain of
	 * {@code failure}, if any: the listener did not run, and must not be acknowledged
	 * until it has.
	 */
	public static @Nullable IdempotencyStoreUnavailableException storeUnavailable(@Nullable Throwable failure) {
		return find(failure, IdempotencyStoreUnavailableException.class);
	}

	/**
	 * The refusal in the cause chain of {@code failure} under which the listener did not
	 * run and the message must be requeued: the store unavailable, or a duplicate in
	 * progress; {@code null} for none.
	 */
	public static @Nullable IdempotencyException notRun(@Nullable Throwable failure) {
		IdempotencyException outage = storeUnavailable(failure);
		return (outage != null) ? outage : inProgress(failure);
	}

	/**
	 * The not-retryable failure in the cause chain of {@code failure}, if any.
	 */
	public static @Nullable Exception notRetryable(@Nullable Throwable failure) {
		for (Class<? extends Exception> type : NOT_RETRYABLE) {
			Exception found = find(failure, type);
			if (found != null) {
				return found;
			}
		}
		return null;
	}

	private static <T extends Throwable> @Nullable T find(@Nullable Throwable failure, Class<T> type) {
		for (Throwable ex = failure; ex != null; ex = ex.getCause()) {
			if (type.isInstance(ex)) {
				return type.cast(ex);
			}
			if (ex.getCause() == ex) {
				break;
			}
		}
		return null;
	}

}
