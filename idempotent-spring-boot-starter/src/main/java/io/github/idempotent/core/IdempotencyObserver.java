package io.github.idempotent.core;

import java.util.List;

import io.github.idempotent.annotation.DuplicateHandling;

/**
 * Callbacks on the outcomes of idempotent calls, for metrics and logs. Called on the
 * caller's thread: implementations must be fast and must not throw.
 */
public interface IdempotencyObserver {

	/** Observer that does nothing. */
	IdempotencyObserver NONE = new IdempotencyObserver() {
	};

	/** Observer passing every callback to {@code observer}, logging what it throws. */
	static IdempotencyObserver failSafe(IdempotencyObserver observer) {
		if (observer == NONE || (observer instanceof ObserverFanOut fanOut && fanOut.failSafe)) {
			return observer;
		}
		return new ObserverFanOut(List.of(observer), true);
	}

	/** Observer that passes every callback to each of {@code observers} in turn. */
	static IdempotencyObserver composite(List<? extends IdempotencyObserver> observers) {
		if (observers.isEmpty()) {
			return NONE;
		}
		return (observers.size() == 1) ? observers.get(0) : new ObserverFanOut(List.copyOf(observers), false);
	}

	/**
	 * The observer of an asynchronous call, asked on the calling thread when the call
	 * starts, so that one bound to that thread (a logging context) can capture what it
	 * needs. By default this observer itself.
	 */
	default IdempotencyObserver forAsyncCall() {
		return this;
	}

	/** The method ran as the first call for the key. */
	default void executed(IdempotencyPolicy policy, String key) {
	}

	/** A stored result was returned without running the method. */
	default void replayed(IdempotencyPolicy policy, String key) {
	}

	/** A duplicate returned {@code null} ({@link DuplicateHandling#SKIP}). */
	default void skipped(IdempotencyPolicy policy, String key) {
	}

	/**
	 * A completed key's duplicate runs again, not stored
	 * ({@link DuplicateHandling#FLAG}).
	 */
	default void flagged(IdempotencyPolicy policy, String key) {
	}

	/** A call was refused: a duplicate in progress, the key reused, or a full store. */
	default void rejected(IdempotencyPolicy policy, String key, IdempotencyException reason) {
	}

	/** The store was unreachable and the method ran unprotected. */
	default void bypassed(IdempotencyPolicy policy, String key, RuntimeException storeFailure) {
	}

	/** The call's key was taken over or deleted: a second execution may have started. */
	default void leaseLost(IdempotencyPolicy policy, String key) {
	}

	/** The call held its key for its {@code maxDuration}: no more renewals, no result. */
	default void maxDurationExceeded(IdempotencyPolicy policy, String key) {
	}

	/** The call reached a {@link Step}, for observers that time calls; must be cheap. */
	default void step(IdempotencyPolicy policy, String key, Step step) {
	}

	/** Points in one call where the store is involved. */
	enum Step {

		/** The store has answered a claim of the key (once per claim). */
		CLAIMED,

		/** The method has returned; its outcome is about to be stored. */
		COMPLETING,

		/** The method has failed; its placeholder is about to be released. */
		RELEASING

	}

}
