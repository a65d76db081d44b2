/**
 * In-memory store for one JVM and for tests.
 * <p>
 * Where each concern is:
 * {@link io.github.idempotent.store.memory.InMemoryIdempotencyStore} claims, completes,
 * releases and renews; {@code BoundedRecords} holds the records within their bound and
 * sweeps the expired ones; the Actuator's inspection is {@code InMemoryStoreInspection}.
 */
package io.github.idempotent.store.memory;
