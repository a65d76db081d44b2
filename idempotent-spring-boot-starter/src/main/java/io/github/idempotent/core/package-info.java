/**
 * The idempotency protocol and what applies it:
 * {@link io.github.idempotent.core.IdempotencyExecutor}, the interception of
 * {@link io.github.idempotent.annotation.Idempotent} methods (its auto-configuration
 * beside the package-private post-processor and interceptor it creates), the template,
 * keys, fingerprints, result codecs and exceptions. Independent of web, Redis and JDBC.
 */
package io.github.idempotent.core;
