package io.github.idempotent.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names and key values of the observation of {@code @Idempotent} calls. Declare a bean of
 * this type to replace {@link DefaultIdempotencyObservationConvention}, or extend that
 * class to add to it.
 */
public interface IdempotencyObservationConvention extends ObservationConvention<IdempotencyObservationContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof IdempotencyObservationContext;
	}

}
