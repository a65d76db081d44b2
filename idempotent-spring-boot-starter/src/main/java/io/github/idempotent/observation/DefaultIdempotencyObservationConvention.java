package io.github.idempotent.observation;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;

import io.github.idempotent.observation.IdempotencyObservationContext.Outcome;
import io.github.idempotent.observation.IdempotencyObservationDocumentation.HighCardinalityKeyNames;
import io.github.idempotent.observation.IdempotencyObservationDocumentation.LowCardinalityKeyNames;

/**
 * The observation {@code idempotent.call}, named {@code idempotent <operation>} in
 * traces, with the low-cardinality key values {@code operation}, {@code outcome} and
 * {@code store}. The client's key is added as the high-cardinality
 * {@code idempotency.key} only when asked for.
 */
public class DefaultIdempotencyObservationConvention implements IdempotencyObservationConvention {

	/**
	 * Name of the observation, and so of its timer.
	 */
	public static final String NAME = "idempotent.call";

	/**
	 * The {@code outcome} while the call runs: what long-task timers and the counters of
	 * events, which are recorded before the outcome is known, are tagged with.
	 */
	private static final KeyValue OUTCOME_UNKNOWN = KeyValue.of(LowCardinalityKeyNames.OUTCOME, "unknown");

	private final boolean includeKey;

	/**
	 * Creates a convention that keeps the client's key out of spans.
	 */
	public DefaultIdempotencyObservationConvention() {
		this(false);
	}

	/**
	 * Creates a convention that adds the client's key to spans when {@code includeKey}.
	 */
	public DefaultIdempotencyObservationConvention(boolean includeKey) {
		this.includeKey = includeKey;
	}

	@Override
	public String getName() {
		return NAME;
	}

	@Override
	public String getContextualName(IdempotencyObservationContext context) {
		return "idempotent " + context.getOperation();
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(IdempotencyObservationContext context) {
		return KeyValues.of(KeyValue.of(LowCardinalityKeyNames.OPERATION, context.getOperation()), outcome(context),
				KeyValue.of(LowCardinalityKeyNames.STORE, context.getStore()));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(IdempotencyObservationContext context) {
		if (!this.includeKey) {
			return KeyValues.empty();
		}
		return KeyValues.of(KeyValue.of(HighCardinalityKeyNames.IDEMPOTENCY_KEY, context.getIdempotencyKey()));
	}

	private static KeyValue outcome(IdempotencyObservationContext context) {
		Outcome outcome = context.getOutcome();
		return (outcome != null) ? KeyValue.of(LowCardinalityKeyNames.OUTCOME, outcome.value()) : OUTCOME_UNKNOWN;
	}

}
