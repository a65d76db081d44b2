/**
 * {@code @Idempotent} on {@code @RabbitListener} methods: the key from the AMQP
 * {@code message-id}, requeue of in-progress duplicates, rejection of what no redelivery
 * can fix, and a {@code message-id} on every message sent.
 */
package io.github.idempotent.messaging.amqp;
