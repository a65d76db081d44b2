/** The {@link io.github.idempotent.annotation.Idempotent} annotation. */
package io.github.idempotent.annotation;
