package io.github.idempotent.messaging.kafka;

import java.time.Duration;

import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.util.Assert;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.FixedBackOff;

import io.github.idempotent.core.IdempotencyException;
import io.github.idempotent.core.IdempotencyExpressionException;
import io.github.idempotent.core.IdempotencyKeyException;
import io.github.idempotent.core.IdempotencyKeyReusedException;
import io.github.idempotent.core.IdempotencyPayloadException;
import io.github.idempotent.core.IdempotencyResultException;
import io.github.idempotent.core.IdempotencyScopeException;

/**
 * Teaches a {@link DefaultErrorHandler} the refusals of {@code @Idempotent}: what no
 * redelivery can fix goes straight to the recoverer; a duplicate in progress is retried
 * every {@code inProgressBackOff} for as long as it takes. Auto-configured on every
 * {@code DefaultErrorHandler} bean; call it on a handler that is not a bean.
 */
public final class IdempotencyErrorHandling {

	// What IdempotencyException.findNotRetryable finds, by type for Spring Kafka's
	// classifier (which looks through the cause chain too).
	@SuppressWarnings("unchecked")
	private static final Class<? extends Exception>[] NOT_RETRYABLE = new Class[] { IdempotencyKeyReusedException.class,
			IdempotencyKeyException.class, IdempotencyPayloadException.class, IdempotencyExpressionException.class,
			IdempotencyResultException.class, IdempotencyScopeException.class };

	private IdempotencyErrorHandling() {
	}

	/** Adds the classification to {@code handler}, replacing its back-off function. */
	public static DefaultErrorHandler configure(DefaultErrorHandler handler, Duration inProgressBackOff) {
		Assert.notNull(handler, "handler must not be null");
		Assert.isTrue(inProgressBackOff != null && !inProgressBackOff.isNegative(),
				"inProgressBackOff must not be negative");
		handler.addNotRetryableExceptions(NOT_RETRYABLE);
		BackOff inProgress = new FixedBackOff(inProgressBackOff.toMillis(), FixedBackOff.UNLIMITED_ATTEMPTS);
		// A store outage is retried like a duplicate in progress: the listener never ran.
		handler.setBackOffFunction(
				(record, failure) -> (IdempotencyException.findRetryable(failure) != null) ? inProgress : null);
		return handler;
	}

}
