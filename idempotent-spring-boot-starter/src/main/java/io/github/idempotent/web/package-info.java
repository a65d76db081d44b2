/**
 * The HTTP contract: the {@code Idempotency-Key} header, exact replays of response
 * entities, and problem responses for the protocol's refusals.
 */
package io.github.idempotent.web;
