package io.github.idempotent.messaging.amqp;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * Queues and messages of the listener tests, on the RabbitMQ at 127.0.0.1:5672.
 */
final class RabbitTestQueues {

	private RabbitTestQueues() {
	}

	/**
	 * Each queue, non-durable, with its {@code .dlq} as its dead-letter queue (through
	 * the default exchange).
	 */
	static Declarables withDeadLetters(List<String> queues) {
		return new Declarables(queues.stream().flatMap((queue) -> {
			Queue dlq = QueueBuilder.nonDurable(queue + ".dlq").build();
			Queue main = QueueBuilder.nonDurable(queue)
				.deadLetterExchange("")
				.deadLetterRoutingKey(queue + ".dlq")
				.build();
			return Stream.of(main, dlq);
		}).toList());
	}

	/**
	 * Deletes each queue and its {@code .dlq}.
	 */
	static void deleteWithDeadLetters(List<String> queues) {
		CachingConnectionFactory connections = new CachingConnectionFactory("127.0.0.1", 5672);
		try {
			RabbitAdmin admin = new RabbitAdmin(connections);
			for (String queue : queues) {
				admin.deleteQueue(queue);
				admin.deleteQueue(queue + ".dlq");
			}
		}
		finally {
			connections.destroy();
		}
	}

	/**
	 * A text message, with {@code messageId} as its message id unless {@code null}.
	 */
	static Message text(@Nullable String messageId, String body) {
		Message message = MessageBuilder.withBody(body.getBytes(StandardCharsets.UTF_8))
			.setContentType("text/plain")
			.build();
		if (messageId != null) {
			message.getMessageProperties().setMessageId(messageId);
		}
		return message;
	}

}
