package io.github.idempotent.aop;

import java.util.function.UnaryOperator;

import org.jspecify.annotations.Nullable;

/**
 * The payload of a message-typed argument, for the fingerprint: never the envelope, which
 * differs on redelivery (and which the JSON mapper cannot always write).
 */
final class MessagePayloads {

	private static final ClassValue<@Nullable UnaryOperator<Object>> UNWRAPPERS = new ClassValue<>() {

		@Override
		protected @Nullable UnaryOperator<Object> computeValue(Class<?> type) {
			if (IdempotentOperationSource.isA(type, "org.springframework.amqp.core.Message")) {
				return Amqp::body;
			}
			if (IdempotentOperationSource.isA(type, "org.springframework.messaging.Message")) {
				return Messaging::payload;
			}
			if (IdempotentOperationSource.isA(type, "org.apache.kafka.clients.consumer.ConsumerRecord")) {
				return Kafka::value;
			}
			return null;
		}

	};

	private MessagePayloads() {
	}

	static @Nullable Object payloadOf(@Nullable Object argument) {
		if (argument == null) {
			return null;
		}
		UnaryOperator<Object> unwrapper = UNWRAPPERS.get(argument.getClass());
		return (unwrapper != null) ? payloadOf(unwrapper.apply(argument)) : argument;
	}

	static boolean anyMessage(Object[] arguments) {
		for (Object argument : arguments) {
			if (argument != null && UNWRAPPERS.get(argument.getClass()) != null) {
				return true;
			}
		}
		return false;
	}

	// One class per library, loaded only when an argument of its type shows up.

	private static final class Amqp {

		static Object body(Object message) {
			return ((org.springframework.amqp.core.Message) message).getBody();
		}

	}

	private static final class Messaging {

		static Object payload(Object message) {
			return ((org.springframework.messaging.Message<?>) message).getPayload();
		}

	}

	private static final class Kafka {

		static @Nullable Object value(Object record) {
			return ((org.apache.kafka.clients.consumer.ConsumerRecord<?, ?>) record).value();
		}

	}

}
