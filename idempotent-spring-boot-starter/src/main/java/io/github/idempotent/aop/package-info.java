/**
 * Applies {@link io.github.idempotent.annotation.Idempotent} to Spring beans. Its
 * auto-configuration lives here, beside the post-processor and the interceptor it
 * creates, which stay package-private.
 */
package io.github.idempotent.aop;
