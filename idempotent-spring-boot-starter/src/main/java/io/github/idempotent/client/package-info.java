/**
 * The client side of idempotency keys: a {@code RestClient} interceptor that gives each
 * logical POST or PATCH one key and retries it safely.
 */
package io.github.idempotent.client;
