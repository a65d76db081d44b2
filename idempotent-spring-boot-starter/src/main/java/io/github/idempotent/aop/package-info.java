/**
 * Applies {@link io.github.idempotent.annotation.Idempotent} to Spring beans.
 */
package io.github.idempotent.aop;
