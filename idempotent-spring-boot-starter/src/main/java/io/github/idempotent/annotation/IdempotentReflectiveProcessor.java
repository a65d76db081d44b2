package io.github.idempotent.annotation;

import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.util.List;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.aot.hint.annotation.ReflectiveProcessor;
import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodParameter;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

/**
 * Registers, during AOT processing, the reflection a native image needs to run an
 * {@link Idempotent @Idempotent} method: the method, the constructors of its
 * {@code cacheFor} types, and binding hints for the stored value's type and the
 * application's parameter types. Names the wrappers, so that this package needs neither
 * Reactor nor Spring Web.
 */
class IdempotentReflectiveProcessor implements ReflectiveProcessor {

	/** Wrappers whose first type argument is the value stored. */
	private static final List<String> WRAPPERS = List.of("java.util.concurrent.CompletableFuture",
			"java.util.concurrent.CompletionStage", "reactor.core.publisher.Mono",
			"org.springframework.http.ResponseEntity", "org.springframework.http.HttpEntity");

	/** The framework's parameters, not the application's payload. */
	private static final List<String> FRAMEWORK_PACKAGES = List.of("jakarta.", "javax.", "org.springframework.",
			"kotlin.", "kotlinx.", "reactor.", "com.rabbitmq.", "org.apache.kafka.");

	private final BindingReflectionHintsRegistrar bindings = new BindingReflectionHintsRegistrar();

	@Override
	public void registerReflectionHints(ReflectionHints hints, AnnotatedElement element) {
		// Kotlin copies an open suspend function's annotations onto a synthetic twin.
		if (!(element instanceof Method method) || method.isSynthetic() || method.isBridge()) {
			return;
		}
		Idempotent idempotent = AnnotatedElementUtils.findMergedAnnotation(method, Idempotent.class);
		if (idempotent == null) {
			return;
		}
		hints.registerMethod(method, ExecutableMode.INVOKE);
		// The constructors by which StoredOutcome recreates a cacheFor type.
		for (Class<? extends Throwable> type : idempotent.cacheFor()) {
			hints.registerType(type, MemberCategory.INVOKE_DECLARED_CONSTRUCTORS);
		}
		this.bindings.registerReflectionHints(hints, storedType(method).getType());
		for (Parameter parameter : method.getParameters()) {
			if (FRAMEWORK_PACKAGES.stream().noneMatch(parameter.getType().getName()::startsWith)) {
				this.bindings.registerReflectionHints(hints, parameter.getParameterizedType());
			}
		}
	}

	static ResolvableType storedType(Method method) {
		ResolvableType type = (KotlinDetector.isSuspendingFunction(method))
				? ResolvableType.forMethodParameter(new MethodParameter(method, -1))
				: ResolvableType.forMethodReturnType(method);
		ClassLoader loader = method.getDeclaringClass().getClassLoader();
		for (String wrapper : WRAPPERS) {
			if (ClassUtils.isPresent(wrapper, loader)) {
				ResolvableType wrapped = type.as(ClassUtils.resolveClassName(wrapper, loader));
				if (wrapped != ResolvableType.NONE) {
					type = wrapped.getGeneric(0);
				}
			}
		}
		return type;
	}

}
