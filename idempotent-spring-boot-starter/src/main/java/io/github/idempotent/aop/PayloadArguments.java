package io.github.idempotent.aop;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;

/**
 * Which arguments make up a method's payload by default: all but the framework's and a
 * message's envelope, which differ between deliveries of one request.
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

	private PayloadArguments() {
	}

	static int[] of(Method method) {
		Class<?>[] types = method.getParameterTypes();
		Annotation[][] annotations = method.getParameterAnnotations();
		return IntStream.range(0, types.length)
			.filter((i) -> !isFrameworkType(types[i]) && !isEnvelope(types[i], annotations[i]))
			.toArray();
	}

	private static boolean isEnvelope(Class<?> type, Annotation[] annotations) {
		return Arrays.stream(annotations)
			.anyMatch((annotation) -> ENVELOPE_ANNOTATIONS.contains(annotation.annotationType().getName()))
				|| ENVELOPE_TYPES.stream().anyMatch((name) -> IdempotentOperationSource.isA(type, name));
	}

	private static boolean isFrameworkType(Class<?> type) {
		return FRAMEWORK_TYPE_PREFIXES.stream().anyMatch(type.getName()::startsWith);
	}

}
