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
 * anywhere in the cause chain: a duplicate in progress or a store outage is retried and
 * never dead-lettered for that alone; {@link #NOT_RETRYABLE} failures go to the
 * dead-letter path at once.
 */
public final class ListenerFailures {

	/** Failures that no redelivery can fix. */
	public static final List<Class<? extends Exception>> NOT_RETRYABLE = List.of(IdempotencyKeyReusedException.class,
			IdempotencyKeyException.class, IdempotencyPayloadException.class, IdempotencyExpressionException.class,
			IdempotencyResultException.class);

	private ListenerFailures() {
	}

	/**
	 * The refusal under which the listener did not run and the message must be requeued
	 * (a store outage under {@code failure-mode=closed}, or a duplicate in progress), if
	 * any.
	 */
	public static @Nullable IdempotencyException notRun(@Nullable Throwable failure) {
		IdempotencyException outage = find(failure, IdempotencyStoreUnavailableException.class);
		return (outage != null) ? outage : find(failure, IdempotencyInProgressException.class);
	}

	/** The not-retryable failure in the cause chain of {@code failure}, if any. */
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
		}
		return null;
	}

}
