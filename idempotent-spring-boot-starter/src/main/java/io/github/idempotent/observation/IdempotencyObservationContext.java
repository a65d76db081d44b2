package io.github.idempotent.observation;

import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * What an observation of one {@code @Idempotent} call knows: the operation, the store,
 * the client's key and, once known, the outcome.
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

	/**
	 * The operation's name ({@code @Idempotent(name)}, by default {@code Class#method}).
	 */
	public String getOperation() {
		return this.operation;
	}

	/**
	 * The store's short name: {@code redis}, {@code jdbc}, {@code memory}, or the simple
	 * name of another store's class.
	 */
	public String getStore() {
		return this.store;
	}

	/**
	 * The key as the caller sent it. It may be a secret: keep it out of meters, and out
	 * of spans unless their readers may know it.
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

	/**
	 * What became of a call.
	 */
	public enum Outcome {

		/**
		 * The method ran as the first call for the key and its result was stored.
		 */
		EXECUTED("executed"),

		/**
		 * A stored outcome was returned without running the method.
		 */
		REPLAYED("replayed"),

		/**
		 * A duplicate of a completed call returned nothing, without running the method or
		 * reading the stored outcome ({@code @Idempotent(onDuplicate = SKIP)}).
		 */
		SKIPPED("skipped"),

		/**
		 * A duplicate of a completed call ran the method again, flagged as a duplicate,
		 * and its outcome was not stored ({@code @Idempotent(onDuplicate = FLAG)}). An
		 * exception of the flagged run keeps this outcome; the observation records the
		 * error.
		 */
		FLAGGED("flagged"),

		/**
		 * Refused: another call with the key was still running.
		 */
		IN_PROGRESS("in-progress"),

		/**
		 * Refused: the key was used before with another payload.
		 */
		KEY_REUSED("key-reused"),

		/**
		 * Refused: the store could not be reached ({@code failure-mode=closed}).
		 */
		STORE_UNAVAILABLE("store-unavailable"),

		/**
		 * Refused in every failure mode: the store had no room for the key.
		 */
		STORE_FULL("store-full"),

		/**
		 * The store could not be reached and the method ran unprotected
		 * ({@code failure-mode=open}).
		 */
		BYPASSED("bypassed"),

		/**
		 * The method ran, but its key had passed to another caller before its outcome was
		 * stored: a duplicate may have run.
		 */
		LEASE_LOST("lease-lost"),

		/**
		 * The method threw (its key released for a retry, or its exception stored when
		 * {@code cacheFor} lists it), or the store failed otherwise than by being
		 * unreachable.
		 */
		ERROR("error");

		private final String value;

		Outcome(String value) {
			this.value = value;
		}

		/**
		 * The outcome as the {@code outcome} key value shows it.
		 */
		public String value() {
			return this.value;
		}

	}

}
