/**
 * Auto-configuration of {@link io.github.idempotent.annotation.Idempotent}: the store,
 * the executor, the interceptor, messaging, the client and operations, all replaceable.
 * The HTTP contract's is in {@link io.github.idempotent.web}.
 */
package io.github.idempotent.autoconfigure;
