package io.github.idempotent.web;

import java.lang.reflect.Method;
import java.util.Arrays;

import org.jspecify.annotations.Nullable;

import org.springframework.util.ClassUtils;
import org.springframework.web.method.HandlerMethod;

/**
 * Whether an intercepted call is the handler of the current request, the one call whose
 * outcome is the response: a controller that calls an idempotent service method is not
 * recorded as that method's outcome.
 */
final class HandlerMethods {

	private HandlerMethods() {
	}

	static boolean isHandler(@Nullable Object handler, Method method, @Nullable Class<?> targetClass) {
		if (!(handler instanceof HandlerMethod handlerMethod)) {
			return false;
		}
		Method handled = handlerMethod.getMethod();
		if (!handled.getName().equals(method.getName())
				|| !Arrays.equals(handled.getParameterTypes(), method.getParameterTypes())) {
			return false;
		}
		Class<?> beanType = handlerMethod.getBeanType();
		Class<?> called = (targetClass != null) ? ClassUtils.getUserClass(targetClass) : method.getDeclaringClass();
		return beanType.isAssignableFrom(called) || called.isAssignableFrom(beanType);
	}

}
