package io.github.idempotent.observation;

import java.util.Locale;

import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/** What the observation of an idempotent call knows: operation, store, key, outcome. */
public class IdempotencyObservationContext extends Observation.Context {

	private final String operation;

	private final String store;

	private final String idempotencyKey;

	private volatile @Nullable Outcome outcome;

	public IdempotencyObservationContext(String operation, String store, String idempotencyKey) {
		this.operation = operation;
		this.store = store;
		this.idempotencyKey = idempotencyKey;
	}

	public String getOperation() {
		return this.operation;
	}

	/**
	 * The store's short name: {@code redis}, {@code jdbc}, {@code memory}, or a store
	 * class's simple name.
	 */
	public String getStore() {
		return this.store;
	}

	/** The key as the caller sent it. It may be a secret: keep it out of meters. */
	public String getIdempotencyKey() {
		return this.idempotencyKey;
	}

	/** What became of the call, or {@code null} while it runs. */
	public @Nullable Outcome getOutcome() {
		return this.outcome;
	}

	public void setOutcome(@Nullable Outcome outcome) {
		this.outcome = outcome;
	}

	public enum Outcome {

		/** The method ran as the first call for the key. */
		EXECUTED,

		/** A stored outcome was returned without running the method. */
		REPLAYED,

		/** A duplicate returned nothing ({@code onDuplicate = SKIP}). */
		SKIPPED,

		/** A duplicate ran the method again, unstored ({@code onDuplicate = FLAG}). */
		FLAGGED,

		/** Refused: another call with the key was still running. */
		IN_PROGRESS,

		/** Refused: the key was used before with another payload. */
		KEY_REUSED,

		/** Refused: the store could not be reached ({@code failure-mode=closed}). */
		STORE_UNAVAILABLE,

		/** Refused: the store had no room for the key. */
		STORE_FULL,

		/** The store could not be reached and the method ran unprotected. */
		BYPASSED,

		/** The method ran, but its key passed to another caller before it completed. */
		LEASE_LOST,

		/** The method threw, or the store failed otherwise than by being unreachable. */
		ERROR;

		private final String value = name().toLowerCase(Locale.ROOT).replace('_', '-');

		/** The tag value: the name in lower case, words joined by {@code -}. */
		public String value() {
			return this.value;
		}

	}

}
