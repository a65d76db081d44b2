/**
 * Auto-configuration of {@link io.github.idempotent.annotation.Idempotent}: the store,
 * the executor, the interceptor and the HTTP contract, all replaceable.
 */
package io.github.idempotent.autoconfigure;
