package io.github.idempotent.core;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;

import org.jspecify.annotations.Nullable;

/**
 * Which arguments make up a method's payload by default: all but the framework's and a
 * message's envelope, which differ between deliveries of one request; of a message-typed
 * argument, only its payload (the JSON mapper cannot always write the envelope).
 */
final class PayloadArguments {

	private static final List<String> FRAMEWORK_TYPE_PREFIXES = List.of("jakarta.servlet.",
			"org.springframework.validation.", "org.springframework.ui.", "org.springframework.web.",
			"org.springframework.http.HttpHeaders", "org.springframework.security.", "java.security.Principal",
			"java.io.", "java.util.Locale", "java.util.TimeZone", "java.time.ZoneId", "kotlin.coroutines.");

	private static final List<String> ENVELOPE_TYPES = List.of("com.rabbitmq.client.Channel",
			"org.springframework.amqp.core.MessageProperties", "org.springframework.messaging.MessageHeaders",
			"org.springframework.kafka.support.Acknowledgment", "org.apache.kafka.clients.consumer.Consumer",
			"org.springframework.kafka.listener.adapter.ConsumerRecordMetadata",
			"org.apache.kafka.common.header.Headers");

	private static final List<String> ENVELOPE_ANNOTATIONS = List.of(
			"org.springframework.messaging.handler.annotation.Header",
			"org.springframework.messaging.handler.annotation.Headers");

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

	private PayloadArguments() {
	}

	static int[] of(Method method) {
		Class<?>[] types = method.getParameterTypes();
		Annotation[][] annotations = method.getParameterAnnotations();
		return IntStream.range(0, types.length)
			.filter((i) -> FRAMEWORK_TYPE_PREFIXES.stream().noneMatch(types[i].getName()::startsWith)
					&& ENVELOPE_TYPES.stream().noneMatch((name) -> IdempotentOperationSource.isA(types[i], name))
					&& Arrays.stream(annotations[i])
						.noneMatch(
								(annotation) -> ENVELOPE_ANNOTATIONS.contains(annotation.annotationType().getName())))
			.toArray();
	}

	static @Nullable Object payloadOf(@Nullable Object argument) {
		if (argument == null) {
			return null;
		}
		UnaryOperator<Object> unwrapper = UNWRAPPERS.get(argument.getClass());
		return (unwrapper != null) ? payloadOf(unwrapper.apply(argument)) : argument;
	}

	static boolean anyMessage(Object[] arguments) {
		return Arrays.stream(arguments)
			.anyMatch((argument) -> argument != null && UNWRAPPERS.get(argument.getClass()) != null);
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
