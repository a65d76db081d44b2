/**
 * Auto-configuration of {@link io.github.idempotent.annotation.Idempotent}: the store,
 * the executor, the template, messaging, the client and metrics, all replaceable. The
 * interception of annotated methods is in {@link io.github.idempotent.core}, the HTTP
 * contract's in {@link io.github.idempotent.web}, the Actuator endpoint's in
 * {@link io.github.idempotent.actuate}.
 */
package io.github.idempotent.autoconfigure;
