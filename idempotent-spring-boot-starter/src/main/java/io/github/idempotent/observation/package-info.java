/**
 * Micrometer Observation of idempotent calls; loaded only with
 * {@code micrometer-observation} on the class path.
 */
package io.github.idempotent.observation;
