/**
 * The idempotency protocol: {@link io.github.idempotent.core.IdempotencyExecutor}, keys,
 * fingerprints, result codecs and exceptions. Independent of web, Redis and JDBC.
 */
package io.github.idempotent.core;
