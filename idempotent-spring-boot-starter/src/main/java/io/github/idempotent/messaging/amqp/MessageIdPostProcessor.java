package io.github.idempotent.messaging.amqp;

import java.util.UUID;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessagePostProcessor;
import org.springframework.util.StringUtils;

/**
 * Gives a message without a {@code message-id} a random one before it is published. Runs
 * once per {@code send}, so the template's own retries carry the same id; a publish the
 * application retries with a new {@code convertAndSend} needs an id of its own.
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
