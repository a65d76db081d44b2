/**
 * {@code @Idempotent} on {@code @KafkaListener} methods: the key from a record header or
 * the record's position, the {@code DefaultErrorHandler} classification of its refusals,
 * and a key header on every record sent.
 */
package io.github.idempotent.messaging.kafka;
