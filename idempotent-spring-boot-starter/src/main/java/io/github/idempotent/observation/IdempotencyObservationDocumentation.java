package io.github.idempotent.observation;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * The observation of {@code @Idempotent} calls: its name, key values and events.
 */
public enum IdempotencyObservationDocumentation implements ObservationDocumentation {

	/** One guarded call, from its claim to the store's answer about its outcome. */
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

		OPERATION {

			@Override
			public String asString() {
				return "operation";
			}

		},

		/**
		 * What became of the call ({@link IdempotencyObservationContext.Outcome}).
		 */
		OUTCOME {

			@Override
			public String asString() {
				return "outcome";
			}

		},

		STORE {

			@Override
			public String asString() {
				return "store";
			}

		}

	}

	/**
	 * Key values with one value per call, for spans only.
	 */
	public enum HighCardinalityKeyNames implements KeyName {

		/**
		 * The key as the caller sent it; only with
		 * {@code idempotent.observation.include-key=true}, as a key can be a secret.
		 */
		IDEMPOTENCY_KEY {

			@Override
			public String asString() {
				return "idempotency.key";
			}

		}

	}

	/**
	 * Steps of a call that involve the store, marked as events on the observation.
	 */
	public enum Events implements Observation.Event {

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
