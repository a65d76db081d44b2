package io.github.idempotent.aop;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.List;
import java.util.stream.IntStream;

/**
 * Which arguments of a method make up its payload by default: all but the framework's and
 * a message's envelope.
 */
final class PayloadArguments {

	/**
	 * Arguments never fingerprinted by default: they differ per request without being
	 * part of the payload.
	 */
	private static final List<String> FRAMEWORK_TYPE_PREFIXES = List.of("jakarta.servlet.",
			"org.springframework.validation.", "org.springframework.ui.", "org.springframework.web.",
			"org.springframework.http.HttpHeaders", "org.springframework.security.", "java.security.Principal",
			"java.io.", "java.util.Locale", "java.util.TimeZone", "java.time.ZoneId", "kotlin.coroutines.");

	/**
	 * The envelope of a message, never fingerprinted: it differs between two deliveries
	 * of one message (delivery tag, offset, {@code redelivered} flag, a channel or
	 * consumer). Matched by class name so that no messaging library is needed.
	 */
	private static final List<String> ENVELOPE_TYPES = List.of("com.rabbitmq.client.Channel",
			"org.springframework.amqp.core.MessageProperties", "org.springframework.messaging.MessageHeaders",
			"org.springframework.kafka.support.Acknowledgment", "org.apache.kafka.clients.consumer.Consumer",
			"org.springframework.kafka.listener.adapter.ConsumerRecordMetadata",
			"org.apache.kafka.common.header.Headers");

	/**
	 * Parameters bound to message headers ({@code @Header}, {@code @Headers}) are part of
	 * the envelope too: name a header in the key or payload expression to use it.
	 */
	private static final List<String> ENVELOPE_ANNOTATIONS = List.of(
			"org.springframework.messaging.handler.annotation.Header",
			"org.springframework.messaging.handler.annotation.Headers");

	private PayloadArguments() {
	}

	/**
	 * Indexes of the arguments that are fingerprinted by default.
	 */
	static int[] of(Method method) {
		Class<?>[] types = method.getParameterTypes();
		Annotation[][] annotations = method.getParameterAnnotations();
		return IntStream.range(0, types.length)
			.filter((i) -> !isFrameworkType(types[i]) && !isEnvelope(types[i], annotations[i]))
			.toArray();
	}

	private static boolean isEnvelope(Class<?> type, Annotation[] annotations) {
		for (Annotation annotation : annotations) {
			if (ENVELOPE_ANNOTATIONS.contains(annotation.annotationType().getName())) {
				return true;
			}
		}
		for (String name : ENVELOPE_TYPES) {
			if (IdempotentOperationSource.isA(type, name)) {
				return true;
			}
		}
		return false;
	}

	private static boolean isFrameworkType(Class<?> type) {
		String name = type.getName();
		for (String prefix : FRAMEWORK_TYPE_PREFIXES) {
			if (name.startsWith(prefix)) {
				return true;
			}
		}
		return false;
	}

}
