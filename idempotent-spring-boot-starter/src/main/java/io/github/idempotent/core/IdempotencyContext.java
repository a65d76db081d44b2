package io.github.idempotent.core;

import java.time.Instant;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

import io.github.idempotent.annotation.DuplicateHandling;

/**
 * What an idempotent method can learn about the call it is running in: which attempt at
 * its key this is, when the attempt before it started, and whether it runs for a
 * duplicate.
 * <p>
 * A call that claims a key whose previous owner never finished (its lease ran out, or an
 * operator forced the key free) runs the method again, and that owner may have had side
 * effects before it stopped: a payment charged, a message sent. Such a call is a
 * {@link #isTakeover() takeover}; a method with an external side effect looks it up by
 * the key before repeating it:
 *
 * <pre class="code">
 * &#64;Idempotent(key = "#request.orderNo")
 * public Charge charge(ChargeRequest request) {
 *     if (IdempotencyContext.current().map(IdempotencyContext::isTakeover).orElse(true)) {
 *         Optional&lt;Charge&gt; earlier = provider.findCharge(request.orderNo());
 *         if (earlier.isPresent()) {
 *             return earlier.get();
 *         }
 *     }
 *     return provider.charge(request);
 * }
 * </pre>
 *
 * The context is bound to the thread that runs the method, for as long as it runs: a
 * method that returns a {@code CompletableFuture} reads it before handing work to another
 * thread, and a reactive method reads it from its Reactor context (see the reference
 * documentation). No context is bound when no key protects the call: a call run
 * unprotected because the store could not be reached ({@code failure-mode=open}), or a
 * method not guarded at all; the example above then takes the careful path.
 *
 * @see io.github.idempotent.store.ClaimResult.Acquired
 */
public final class IdempotencyContext {

	/**
	 * The key under which a reactive method finds its context in its Reactor context:
	 * {@code Mono.deferContextual((context) -> context.getOrEmpty(IdempotencyContext.REACTOR_CONTEXT_KEY))}.
	 */
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

	/**
	 * The context of a call that claimed its key: attempt 1, or a takeover.
	 */
	public static IdempotencyContext owner(String operation, String key, int attempt,
			@Nullable Instant previousAttemptStartedAt) {
		return new IdempotencyContext(operation, key, attempt, previousAttemptStartedAt, false);
	}

	/**
	 * The context of a duplicate that runs although its key has completed, because its
	 * operation asked to see duplicates ({@link DuplicateHandling#FLAG}).
	 */
	public static IdempotencyContext duplicate(String operation, String key) {
		return new IdempotencyContext(operation, key, 1, null, true);
	}

	/**
	 * The context of the idempotent call running on this thread, if any.
	 */
	public static Optional<IdempotencyContext> current() {
		return Optional.ofNullable(current.get());
	}

	/**
	 * Binds {@code context} to this thread until the returned scope is closed, which
	 * restores what was bound before (the context of an enclosing idempotent call).
	 */
	public static Scope bind(IdempotencyContext context) {
		Assert.notNull(context, "context must not be null");
		IdempotencyContext previous = current.get();
		current.set(context);
		return () -> {
			if (previous != null) {
				current.set(previous);
			}
			else {
				current.remove();
			}
		};
	}

	/**
	 * Binds no context to this thread until the returned scope is closed, which restores
	 * what was bound before: for a call that runs unprotected inside an idempotent one,
	 * which must not take the enclosing call's context for its own.
	 */
	public static Scope unbind() {
		IdempotencyContext previous = current.get();
		if (previous == null) {
			return () -> {
			};
		}
		current.remove();
		return () -> current.set(previous);
	}

	/**
	 * The operation's name, as in metrics and the record key.
	 */
	public String getOperation() {
		return this.operation;
	}

	/**
	 * The idempotency key as the caller sent it (or as the key expression gave it).
	 */
	public String getKey() {
		return this.key;
	}

	/**
	 * Which attempt at the key this call is: 1 for the first, one more for each call
	 * taken over before it. A store remembers an unfinished attempt for a limited time
	 * (docs/stores.md); a takeover after that counts as attempt 1 again.
	 */
	public int getAttempt() {
		return this.attempt;
	}

	/**
	 * Whether this call took its key over from a call that never finished, whose side
	 * effects may have happened.
	 */
	public boolean isTakeover() {
		return this.attempt > 1;
	}

	/**
	 * When the attempt this call took over claimed the key, to the second, by the clock
	 * of the instance that claimed it; empty on attempt 1, or when the store does not
	 * know.
	 */
	public Optional<Instant> getPreviousAttemptStartedAt() {
		return Optional.ofNullable(this.previousAttemptStartedAt);
	}

	/**
	 * Whether this call is a duplicate of a call that has completed, run only because its
	 * operation asked to see duplicates ({@link DuplicateHandling#FLAG}); its outcome is
	 * not stored.
	 */
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

	/**
	 * A binding of a context to a thread, ended by {@link #close()}.
	 */
	@FunctionalInterface
	public interface Scope extends AutoCloseable {

		@Override
		void close();

	}

}
