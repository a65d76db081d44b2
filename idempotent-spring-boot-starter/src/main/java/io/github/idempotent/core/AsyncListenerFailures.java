package io.github.idempotent.core;

import java.util.function.UnaryOperator;

import org.jspecify.annotations.Nullable;

/**
 * How the message listener container dispatching on the current thread wants the refusals
 * of a listener that returns a future or a {@code Mono}. Spring AMQP acknowledges such a
 * listener when its result completes, after the container's advice chain and error
 * handler have returned, so only the failure it completes with can carry the decision
 * (requeue, or reject to the dead-letter exchange). Bound by the container's advice for
 * one dispatch; applied by {@code @Idempotent} to what a listener method returns.
 */
public final class AsyncListenerFailures {

	private static final ThreadLocal<@Nullable UnaryOperator<Throwable>> current = new ThreadLocal<>();

	private AsyncListenerFailures() {
	}

	/**
	 * Binds {@code translation} to the current thread, or unbinds with {@code null}.
	 * @return the translation bound before, to bind again once the dispatch ends
	 */
	public static @Nullable UnaryOperator<Throwable> bind(@Nullable UnaryOperator<Throwable> translation) {
		UnaryOperator<Throwable> previous = current.get();
		if (translation != null) {
			current.set(translation);
		}
		else {
			current.remove();
		}
		return previous;
	}

	/** The translation of the dispatch on the current thread, if any. */
	public static @Nullable UnaryOperator<Throwable> current() {
		return current.get();
	}

}
