package io.github.idempotent.messaging.amqp;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.util.StringUtils;

import io.github.idempotent.core.IdempotencyKeyResolver;

/**
 * Takes the key of a {@code @RabbitListener} call from the AMQP {@code message-id} of the
 * message being handled. Offers its headers to expressions as {@code #headers} and the
 * message as {@code #amqpMessage}.
 */
public class RabbitMessageKeyResolver implements IdempotencyKeyResolver {

	private static final ThreadLocal<Message> CURRENT = new ThreadLocal<>();

	/** The message the current thread handles, or {@code null} outside a listener. */
	public static @Nullable Message currentMessage() {
		return CURRENT.get();
	}

	static @Nullable Message bind(@Nullable Message message) {
		Message previous = CURRENT.get();
		if (message != null) {
			CURRENT.set(message);
		}
		else {
			CURRENT.remove();
		}
		return previous;
	}

	@Override
	public @Nullable String resolveKey() {
		Message message = CURRENT.get();
		String id = (message != null) ? message.getMessageProperties().getMessageId() : null;
		return StringUtils.hasText(id) ? id : null;
	}

	@Override
	public String describeSource() {
		return "the message-id property of the AMQP message (publish it with one: RabbitTemplate does when "
				+ "idempotent.messaging.stamp-outgoing is true, or set MessageProperties#setMessageId), or name a "
				+ "key with @Idempotent(key = \"#event.id\")";
	}

	@Override
	public boolean isCallerless() {
		return CURRENT.get() != null;
	}

	@Override
	public boolean appliesToCurrentCall() {
		return CURRENT.get() != null;
	}

	@Override
	public @Nullable Object resolveVariable(String name) {
		Message message = CURRENT.get();
		if (message == null || !"headers".equals(name)) {
			return "amqpMessage".equals(name) ? message : null;
		}
		MessageProperties properties = message.getMessageProperties();
		Map<String, @Nullable Object> headers = new HashMap<>(properties.getHeaders());
		headers.put("messageId", properties.getMessageId());
		headers.put("correlationId", properties.getCorrelationId());
		headers.put("type", properties.getType());
		return Collections.unmodifiableMap(headers);
	}

}
