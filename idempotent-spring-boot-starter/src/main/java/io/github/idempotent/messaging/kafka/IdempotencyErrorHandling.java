package io.github.idempotent.messaging.kafka;

import java.time.Duration;

import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.util.Assert;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.FixedBackOff;

import io.github.idempotent.messaging.ListenerFailures;

/**
 * Teaches a {@link DefaultErrorHandler} the refusals of {@code @Idempotent}:
 * <ul>
 * <li>key reused with another payload, missing or malformed key, payload that cannot be
 * fingerprinted: not retryable, straight to the handler's recoverer (a
 * {@code DeadLetterPublishingRecoverer} publishes the record to the dead-letter topic
 * with the exception in its headers);
 * <li>a duplicate still in progress: retried every {@code inProgressBackOff} for as long
 * as it takes, so that it is never handed to the recoverer for that alone; a placeholder
 * left by a crashed consumer expires with its lease, and the retry then runs the
 * listener.
 * </ul>
 * Auto-configured on every {@code DefaultErrorHandler} bean (and on the one the starter
 * defines when the application has no {@code CommonErrorHandler}); call it on a handler
 * that is not a bean: <pre class="code">
 * DefaultErrorHandler handler = new DefaultErrorHandler(new DeadLetterPublishingRecoverer(template));
 * IdempotencyErrorHandling.configure(handler, Duration.ofSeconds(1));
 * </pre>
 */
public final class IdempotencyErrorHandling {

	private IdempotencyErrorHandling() {
	}

	/**
	 * Adds the classification to {@code handler}. Replaces any back-off function it has.
	 */
	public static DefaultErrorHandler configure(DefaultErrorHandler handler, Duration inProgressBackOff) {
		Assert.notNull(handler, "handler must not be null");
		Assert.isTrue(inProgressBackOff != null && !inProgressBackOff.isNegative(),
				"inProgressBackOff must not be negative");
		handler.addNotRetryableExceptions(ListenerFailures.NOT_RETRYABLE.toArray(new Class[0]));
		BackOff inProgress = new FixedBackOff(inProgressBackOff.toMillis(), FixedBackOff.UNLIMITED_ATTEMPTS);
		// A store outage (failure-mode=closed) is retried like an in-progress duplicate:
		// the listener has not run, so the record must be neither skipped nor
		// dead-lettered for it.
		handler.setBackOffFunction((record, failure) -> (ListenerFailures.inProgress(failure) != null
				|| ListenerFailures.storeUnavailable(failure) != null) ? inProgress : null);
		return handler;
	}

}
