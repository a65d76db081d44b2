package io.github.idempotent.observation;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;

import io.github.idempotent.observation.IdempotencyObservationContext.Outcome;
import io.github.idempotent.observation.IdempotencyObservationDocumentation.HighCardinalityKeyNames;
import io.github.idempotent.observation.IdempotencyObservationDocumentation.LowCardinalityKeyNames;

/**
 * The observation {@code idempotent.call}, named {@code idempotent <operation>} in
 * traces; the client's key is added to spans only when asked for.
 */
public class DefaultIdempotencyObservationConvention implements IdempotencyObservationConvention {

	public static final String NAME = "idempotent.call";

	// The outcome before it is known, as long-task timers and event counters see it.
	private static final KeyValue OUTCOME_UNKNOWN = KeyValue.of(LowCardinalityKeyNames.OUTCOME, "unknown");

	private final boolean includeKey;

	public DefaultIdempotencyObservationConvention() {
		this(false);
	}

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
		Outcome outcome = context.getOutcome();
		return KeyValues.of(KeyValue.of(LowCardinalityKeyNames.OPERATION, context.getOperation()),
				(outcome != null) ? KeyValue.of(LowCardinalityKeyNames.OUTCOME, outcome.value()) : OUTCOME_UNKNOWN,
				KeyValue.of(LowCardinalityKeyNames.STORE, context.getStore()));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(IdempotencyObservationContext context) {
		return this.includeKey
				? KeyValues.of(KeyValue.of(HighCardinalityKeyNames.IDEMPOTENCY_KEY, context.getIdempotencyKey()))
				: KeyValues.empty();
	}

}
