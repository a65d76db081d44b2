package io.github.idempotent.observation;

import java.util.Locale;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/** The observation of {@code @Idempotent} calls: its name, key values and events. */
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

	/** Key values of every call: few distinct values each, so they tag meters. */
	public enum LowCardinalityKeyNames implements KeyName {

		OPERATION,

		/** What became of the call ({@link IdempotencyObservationContext.Outcome}). */
		OUTCOME,

		STORE;

		private final String name = name().toLowerCase(Locale.ROOT);

		@Override
		public String asString() {
			return this.name;
		}

	}

	/** Key values with one value per call, for spans only. */
	public enum HighCardinalityKeyNames implements KeyName {

		/**
		 * The key as the caller sent it; only with
		 * {@code idempotent.observation.include-key=true}, as a key can be a secret.
		 */
		IDEMPOTENCY_KEY;

		@Override
		public String asString() {
			return "idempotency.key";
		}

	}

	/** Steps of a call that involve the store, marked as events on the observation. */
	public enum Events implements Observation.Event {

		CLAIMED("idempotency key claimed"),

		COMPLETING("storing idempotent outcome"),

		RELEASING("releasing idempotency key");

		private final String name = name().toLowerCase(Locale.ROOT);

		private final String contextualName;

		Events(String contextualName) {
			this.contextualName = contextualName;
		}

		@Override
		public String getName() {
			return this.name;
		}

		@Override
		public String getContextualName() {
			return this.contextualName;
		}

	}

}
