package io.github.idempotent.aop;

import java.lang.reflect.Method;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.springframework.core.MethodParameter;
import org.springframework.core.ResolvableType;

/**
 * A method's {@link IdempotentOperation.Kind} and the type of the result that is stored.
 */
final class OperationReturnTypes {

	private static final String MONO = "reactor.core.publisher.Mono";

	private OperationReturnTypes() {
	}

	static IdempotentOperation.Kind kind(Method method, ResolvableType returnType) {
		if (isSuspending(method)) {
			return IdempotentOperation.Kind.MONO;
		}
		Class<?> raw = returnType.toClass();
		if (raw == CompletableFuture.class || raw == CompletionStage.class) {
			return IdempotentOperation.Kind.FUTURE;
		}
		if (raw.getName().equals(MONO)) {
			return IdempotentOperation.Kind.MONO;
		}
		return IdempotentOperation.Kind.VALUE;
	}

	private static boolean isSuspending(Method method) {
		Class<?>[] parameters = method.getParameterTypes();
		return parameters.length > 0
				&& "kotlin.coroutines.Continuation".equals(parameters[parameters.length - 1].getName());
	}

	static ResolvableType valueType(Method method, Class<?> targetClass, ResolvableType returnType,
			IdempotentOperation.Kind kind) {
		if (kind == IdempotentOperation.Kind.VALUE) {
			return returnType;
		}
		if (isSuspending(method)) {
			// Not forMethodParameter(parameter, targetClass): that replaces the type
			// instead of resolving it in the bean's class.
			ResolvableType declared = ResolvableType
				.forMethodParameter(new MethodParameter(method, -1).withContainingClass(targetClass));
			Class<?> raw = declared.resolve();
			return (raw == null || "kotlin.Unit".equals(raw.getName())) ? ResolvableType.forClass(Void.class)
					: declared;
		}
		ResolvableType value = returnType.getGeneric(0);
		return (value.resolve() != null) ? value : ResolvableType.forClass(Object.class);
	}

}
