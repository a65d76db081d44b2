package io.github.idempotent.observation;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * The observation of {@code @Idempotent} calls: its name, key values and events.
 */
public enum IdempotencyObservationDocumentation implements ObservationDocumentation {

	/**
	 * One guarded call, from its claim to the store's answer about its outcome.
	 */
	IDEMPOTENT_CALL {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultIdempotencyObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return LowCardinalityKeyNames.values();
		}

		@Override
		public KeyName[] getHighCardinalityKeyNames() {
			return HighCardinalityKeyNames.values();
		}

		@Override
		public Observation.Event[] getEvents() {
			return Events.values();
		}

	};

	/**
	 * Key values of every call: few distinct values each, so they tag meters.
	 */
	public enum LowCardinalityKeyNames implements KeyName {

		/**
		 * The operation's name ({@code @Idempotent(name)}, by default
		 * {@code Class#method}).
		 */
		OPERATION {

			@Override
			public String asString() {
				return "operation";
			}

		},

		/**
		 * What became of the call: {@code executed}, {@code replayed}, {@code skipped},
		 * {@code flagged}, {@code in-progress}, {@code key-reused},
		 * {@code store-unavailable}, {@code bypassed}, {@code lease-lost} or
		 * {@code error}.
		 */
		OUTCOME {

			@Override
			public String asString() {
				return "outcome";
			}

		},

		/**
		 * The store: {@code redis}, {@code jdbc}, {@code memory}, or the simple name of
		 * another store's class.
		 */
		STORE {

			@Override
			public String asString() {
				return "store";
			}

		}

	}

	/**
	 * Key values with one value per call, for spans only; none is added by default.
	 */
	public enum HighCardinalityKeyNames implements KeyName {

		/**
		 * The key as the caller sent it. Added only with
		 * {@code idempotent.observation.include-key=true}: a client key can be a secret
		 * (anyone who knows it gets the stored result replayed), and traces are often
		 * readable by more people than the data.
		 */
		IDEMPOTENCY_KEY {

			@Override
			public String asString() {
				return "idempotency.key";
			}

		}

	}

	/**
	 * Steps of a call that involve the store, marked as events on the observation (span
	 * annotations when tracing is on). The time from the start to {@code claimed} is the
	 * claim's round trip; from {@code completing} or {@code releasing} to the end, the
	 * write of the outcome; between them, the method.
	 */
	public enum Events implements Observation.Event {

		/**
		 * The store answered a claim of the key (a duplicate that waits claims again).
		 */
		CLAIMED {

			@Override
			public String getName() {
				return "claimed";
			}

			@Override
			public String getContextualName() {
				return "idempotency key claimed";
			}

		},

		/**
		 * The method returned (or threw an exception it caches): its outcome is being
		 * stored.
		 */
		COMPLETING {

			@Override
			public String getName() {
				return "completing";
			}

			@Override
			public String getContextualName() {
				return "storing idempotent outcome";
			}

		},

		/**
		 * The method failed: the key is being released for a retry.
		 */
		RELEASING {

			@Override
			public String getName() {
				return "releasing";
			}

			@Override
			public String getContextualName() {
				return "releasing idempotency key";
			}

		}

	}

}
