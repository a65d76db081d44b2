/**
 * Micrometer Observation of {@code @Idempotent} calls: one observation per call, named
 * {@code idempotent.call}, documented by
 * {@link io.github.idempotent.observation.IdempotencyObservationDocumentation}. Loaded
 * only when {@code micrometer-observation} is on the class path.
 */
package io.github.idempotent.observation;
