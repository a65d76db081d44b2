/**
 * The storage SPI: {@link io.github.idempotent.store.IdempotencyStore} and its values.
 */
package io.github.idempotent.store;
