package io.github.idempotent.web;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.core.MethodParameter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.util.ClassUtils;
import org.springframework.util.ConcurrentReferenceHashMap;
import org.springframework.web.bind.annotation.ResponseBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.method.HandlerMethod;

/**
 * Which intercepted calls have their response recorded: only the handler of the current
 * request (a controller that calls an idempotent service method is not recorded as that
 * method's outcome), and only a handler whose return value the message converters write
 * ({@code @ResponseBody}, {@code @RestController}, an {@code HttpEntity}), since a replay
 * stands in for it with nothing: a view name, a {@code ModelAndView}, a primitive or
 * {@code HttpHeaders} cannot be stood in for, and keep the codec.
 */
final class HandlerMethods {

	private HandlerMethods() {
	}

	/**
	 * The request's handler when {@code method} is the one called, else {@code null}.
	 */
	static @Nullable HandlerMethod handlerCalled(@Nullable Object handler, Method method,
			@Nullable Class<?> targetClass) {
		if (!(handler instanceof HandlerMethod handlerMethod) || targetClass == null
				|| ClassUtils.getUserClass(targetClass) != handlerMethod.getBeanType()) {
			return null;
		}
		Method handled = handlerMethod.getMethod();
		// The usual case (a CGLIB proxy calls the class's own method) needs no lookup.
		if (!method.equals(handled) && !AopUtils.getMostSpecificMethod(method, targetClass).equals(handled)) {
			return null;
		}
		return handlerMethod;
	}

	/**
	 * Whether the handler's response is recorded: whether the message converters write
	 * its return value.
	 */
	static boolean isRecorded(HandlerMethod handlerMethod) {
		return writtenByConverters.computeIfAbsent(handlerMethod.getMethod(),
				(key) -> isWrittenByConverters(handlerMethod));
	}

	/**
	 * Status of a handler's plain return value: its {@code @ResponseStatus}, else 200.
	 */
	static int status(HandlerMethod handlerMethod) {
		return statuses.computeIfAbsent(handlerMethod.getMethod(), (method) -> {
			ResponseStatus status = handlerMethod.getMethodAnnotation(ResponseStatus.class);
			if (status == null) {
				status = AnnotatedElementUtils.findMergedAnnotation(handlerMethod.getBeanType(), ResponseStatus.class);
			}
			return (status != null) ? status.code().value() : 200;
		});
	}

	/**
	 * Read once per handler method, like {@link #writtenByConverters}: a typed replay
	 * reads no annotations.
	 */
	private static final Map<Method, Integer> statuses = new ConcurrentReferenceHashMap<>();

	/**
	 * Decided once per handler method: the per-request path reads no annotations.
	 */
	private static final Map<Method, Boolean> writtenByConverters = new ConcurrentReferenceHashMap<>();

	private static boolean isWrittenByConverters(HandlerMethod handlerMethod) {
		Class<?> returned = valueType(handlerMethod.getReturnType());
		if (returned == void.class || returned == Void.class) {
			return true;
		}
		if (returned.isPrimitive() || HttpHeaders.class.isAssignableFrom(returned)) {
			return false;
		}
		return HttpEntity.class.isAssignableFrom(returned) || handlerMethod.hasMethodAnnotation(ResponseBody.class)
				|| AnnotatedElementUtils.hasAnnotation(handlerMethod.getBeanType(), ResponseBody.class);
	}

	/**
	 * The type of the value a handler hands back: inside a future or a reactive type.
	 */
	private static Class<?> valueType(MethodParameter returnType) {
		Class<?> type = returnType.getParameterType();
		if (CompletionStage.class.isAssignableFrom(type)
				|| ReactiveAdapterRegistry.getSharedInstance().getAdapter(type) != null) {
			Class<?> nested = returnType.nested().getNestedParameterType();
			return (nested != type) ? nested : Object.class;
		}
		return type;
	}

}
