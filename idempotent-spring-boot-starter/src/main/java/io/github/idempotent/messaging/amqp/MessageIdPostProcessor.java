package io.github.idempotent.messaging.amqp;

import java.util.UUID;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessagePostProcessor;
import org.springframework.util.StringUtils;

/**
 * Gives a message without a {@code message-id} a random one before it is published, and
 * leaves one that has an id alone. Registered on {@code RabbitTemplate} as a
 * before-publish post-processor, it runs once per {@code send}: the template's own
 * retries publish the same {@code Message}, so they carry the same id, and the consumer's
 * {@code @Idempotent} recognises them as one. A publish retried by the application with a
 * new {@code convertAndSend} is a new message: give it an id of its own (an event id) to
 * make the two one.
 */
public class MessageIdPostProcessor implements MessagePostProcessor {

	@Override
	public Message postProcessMessage(Message message) {
		if (!StringUtils.hasText(message.getMessageProperties().getMessageId())) {
			message.getMessageProperties().setMessageId(UUID.randomUUID().toString());
		}
		return message;
	}

}
