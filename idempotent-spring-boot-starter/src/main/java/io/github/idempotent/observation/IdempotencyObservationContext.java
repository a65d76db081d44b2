package io.github.idempotent.observation;

import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * What an observation of one idempotent call knows: operation, store, key and outcome.
 */
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

	/**
	 * The key as the caller sent it. It may be a secret: keep it out of meters.
	 */
	public String getIdempotencyKey() {
		return this.idempotencyKey;
	}

	/**
	 * What became of the call, or {@code null} while it runs.
	 */
	public @Nullable Outcome getOutcome() {
		return this.outcome;
	}

	public void setOutcome(@Nullable Outcome outcome) {
		this.outcome = outcome;
	}

	public enum Outcome {

		/** The method ran as the first call for the key. */
		EXECUTED("executed"),

		/** A stored outcome was returned without running the method. */
		REPLAYED("replayed"),

		/** A duplicate returned nothing ({@code onDuplicate = SKIP}). */
		SKIPPED("skipped"),

		/** A duplicate ran the method again, unstored ({@code onDuplicate = FLAG}). */
		FLAGGED("flagged"),

		/** Refused: another call with the key was still running. */
		IN_PROGRESS("in-progress"),

		/** Refused: the key was used before with another payload. */
		KEY_REUSED("key-reused"),

		/** Refused: the store could not be reached ({@code failure-mode=closed}). */
		STORE_UNAVAILABLE("store-unavailable"),

		/** Refused: the store had no room for the key. */
		STORE_FULL("store-full"),

		/** The store could not be reached and the method ran unprotected. */
		BYPASSED("bypassed"),

		/** The method ran, but its key passed to another caller before it completed. */
		LEASE_LOST("lease-lost"),

		/** The method threw, or the store failed otherwise than by being unreachable. */
		ERROR("error");

		private final String value;

		Outcome(String value) {
			this.value = value;
		}

		public String value() {
			return this.value;
		}

	}

}
