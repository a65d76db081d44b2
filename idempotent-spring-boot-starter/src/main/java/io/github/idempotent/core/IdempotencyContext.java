package io.github.idempotent.core;

import java.time.Instant;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

import io.github.idempotent.annotation.DuplicateHandling;

/**
 * What an idempotent method can learn about the call it runs in: its attempt at the key,
 * and whether it runs for a duplicate. A {@link #isTakeover() takeover} claimed a key
 * whose previous owner never finished and may have had side effects, so a method with an
 * external side effect looks it up before repeating it:
 *
 * <pre class="code">
 * if (IdempotencyContext.current().map(IdempotencyContext::isTakeover).orElse(true)) {
 *     // look up the earlier attempt's charge before charging again
 * }
 * </pre>
 *
 * The context is bound to the thread that runs the method (a reactive method reads it
 * from its Reactor context). None is bound when no key protects the call, such as a call
 * run unprotected with {@code failure-mode=open}.
 */
public final class IdempotencyContext {

	/** The key of the context in a reactive method's Reactor context. */
	public static final Class<IdempotencyContext> REACTOR_CONTEXT_KEY = IdempotencyContext.class;

	private static final ThreadLocal<@Nullable IdempotencyContext> current = new ThreadLocal<>();

	private final String operation;

	private final String key;

	private final int attempt;

	private final @Nullable Instant previousAttemptStartedAt;

	private final boolean duplicate;

	private IdempotencyContext(String operation, String key, int attempt, @Nullable Instant previousAttemptStartedAt,
			boolean duplicate) {
		Assert.hasText(operation, "operation must not be empty");
		Assert.notNull(key, "key must not be null");
		Assert.isTrue(attempt >= 1, "attempt must be 1 or more");
		this.operation = operation;
		this.key = key;
		this.attempt = attempt;
		this.previousAttemptStartedAt = previousAttemptStartedAt;
		this.duplicate = duplicate;
	}

	/** The context of a call that claimed its key: attempt 1, or a takeover. */
	public static IdempotencyContext owner(String operation, String key, int attempt,
			@Nullable Instant previousAttemptStartedAt) {
		return new IdempotencyContext(operation, key, attempt, previousAttemptStartedAt, false);
	}

	/** The context of a duplicate run for {@link DuplicateHandling#FLAG}. */
	public static IdempotencyContext duplicate(String operation, String key) {
		return new IdempotencyContext(operation, key, 1, null, true);
	}

	/** The context of the idempotent call running on this thread, if any. */
	public static Optional<IdempotencyContext> current() {
		return Optional.ofNullable(current.get());
	}

	/** Binds {@code context} to this thread; closing the scope restores the last. */
	public static Scope bind(IdempotencyContext context) {
		Assert.notNull(context, "context must not be null");
		return replace(context);
	}

	/** {@link #bind} of no context, for a call run unprotected inside another. */
	public static Scope unbind() {
		return replace(null);
	}

	private static Scope replace(@Nullable IdempotencyContext context) {
		IdempotencyContext previous = current.get();
		set(context);
		return () -> set(previous);
	}

	private static void set(@Nullable IdempotencyContext context) {
		if (context != null) {
			current.set(context);
		}
		else {
			current.remove();
		}
	}

	/** The operation's name, as in metrics and the record key. */
	public String getOperation() {
		return this.operation;
	}

	/** The idempotency key as the caller sent it. */
	public String getKey() {
		return this.key;
	}

	/** Which attempt at the key this call is: 1 for the first, one more per takeover. */
	public int getAttempt() {
		return this.attempt;
	}

	/** Whether this call took its key over from a call that never finished. */
	public boolean isTakeover() {
		return this.attempt > 1;
	}

	/** When the attempt taken over claimed the key; empty on attempt 1 or if unknown. */
	public Optional<Instant> getPreviousAttemptStartedAt() {
		return Optional.ofNullable(this.previousAttemptStartedAt);
	}

	/** Whether this is a duplicate run for {@link DuplicateHandling#FLAG}, not stored. */
	public boolean isDuplicate() {
		return this.duplicate;
	}

	@Override
	public String toString() {
		return "IdempotencyContext[operation=" + this.operation + ", attempt=" + this.attempt
				+ ((this.previousAttemptStartedAt != null)
						? ", previousAttemptStartedAt=" + this.previousAttemptStartedAt : "")
				+ (this.duplicate ? ", duplicate" : "") + "]";
	}

	/** A binding of a context to a thread, ended by {@link #close()}. */
	@FunctionalInterface
	public interface Scope extends AutoCloseable {

		@Override
		void close();

	}

}
