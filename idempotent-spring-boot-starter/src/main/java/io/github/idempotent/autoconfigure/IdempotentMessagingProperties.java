package io.github.idempotent.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code @Idempotent} on RabbitMQ and Kafka listeners, under
 * {@code idempotent.messaging}.
 *
 * @param inProgressBackOff Delay before a message whose duplicate is still being
 * processed is redelivered.
 * @param keyHeader Kafka record header that carries the idempotency key; without it, the
 * record's position is the key.
 * @param stampOutgoing Whether messages sent with RabbitTemplate and KafkaTemplate get a
 * key when they have none.
 */
public record IdempotentMessagingProperties(@DefaultValue("1s") Duration inProgressBackOff,
		@DefaultValue("Idempotency-Key") String keyHeader, @DefaultValue("true") boolean stampOutgoing) {

}
