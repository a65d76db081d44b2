/**
 * {@code @Idempotent} on message listeners: which of its refusals a broker should retry
 * and which it should dead-letter.
 */
package io.github.idempotent.messaging;
