/**
 * The HTTP contract: the {@code Idempotency-Key} header, exact replays of response
 * entities, and problem responses for the protocol's refusals. Its auto-configurations
 * (Spring MVC, WebFlux) and {@code idempotent.web.*} live here, beside the classes they
 * create, which stay package-private.
 */
package io.github.idempotent.web;
