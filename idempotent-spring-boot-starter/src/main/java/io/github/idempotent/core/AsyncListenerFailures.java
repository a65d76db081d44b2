package io.github.idempotent.core;

import java.time.Duration;
import java.util.function.UnaryOperator;

import org.jspecify.annotations.Nullable;

/**
 * How the listener container dispatching on the current thread wants the refusals of a
 * listener that returns a future or a {@code Mono}: Spring AMQP acknowledges it when its
 * result completes, after the error handler has returned, so only the failure it
 * completes with can requeue or dead-letter. Bound by the container's advice for one
 * dispatch.
 */
public final class AsyncListenerFailures {

	private static final ThreadLocal<@Nullable Translation> current = new ThreadLocal<>();

	private AsyncListenerFailures() {
	}

	/**
	 * Binds {@code translation} to the current thread, or unbinds with {@code null}.
	 * @return the translation bound before, to bind again once the dispatch ends
	 */
	public static @Nullable Translation bind(@Nullable Translation translation) {
		Translation previous = current.get();
		if (translation != null) {
			current.set(translation);
		}
		else {
			current.remove();
		}
		return previous;
	}

	/** The translation of the dispatch on the current thread, if any. */
	public static @Nullable Translation current() {
		return current.get();
	}

	/**
	 * A listener's failure as its container wants it, and how long one it requeues is
	 * held back first: redelivered at once, a duplicate would be claimed again and again.
	 */
	public record Translation(UnaryOperator<Throwable> failures, Duration requeueDelay) {

		/** How long to hold {@code failure} back before the listener's result fails. */
		public Duration delayOf(Throwable failure) {
			return (IdempotencyException.findNotRetryable(failure) == null
					&& IdempotencyException.findRetryable(failure) != null) ? this.requeueDelay : Duration.ZERO;
		}

	}

}
