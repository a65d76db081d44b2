/**
 * {@code @Idempotent} on message listeners: RabbitMQ in {@code amqp}, Kafka in
 * {@code kafka}. Which refusals a listener of any broker should retry and which it should
 * dead-letter, {@link io.github.idempotent.core.IdempotencyException} tells.
 */
package io.github.idempotent.messaging;
