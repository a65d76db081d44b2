package io.github.idempotent.annotation;

import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.util.List;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.aot.hint.annotation.ReflectiveProcessor;
import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodParameter;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * Registers, during Spring's AOT processing, the reflection a native image needs to run
 * an {@link Idempotent @Idempotent} method; Spring applies it to every bean class that
 * has one, as it does for {@code @EventListener} or {@code @MessageMapping} methods.
 * <ul>
 * <li>the method itself: the interceptor reads its annotation and the proxy invokes it
 * reflectively;</li>
 * <li>the {@code String} (or no-argument) constructor of each {@code cacheFor} type: a
 * replay recreates the stored exception through it;</li>
 * <li>binding hints for the stored value's type (the return type, {@code T} of
 * {@code CompletableFuture<T>}, {@code Mono<T>} or {@code ResponseEntity<T>}, a Kotlin
 * suspend function's declared type): Jackson writes it and reads it back on a
 * replay;</li>
 * <li>binding hints for the application's own parameter types: Jackson writes them to
 * fingerprint the payload, and SpEL key expressions such as {@code #request.orderNo} call
 * their accessors.</li>
 * </ul>
 * Compared by class name rather than by class, so that this package needs neither Reactor
 * nor Spring Web.
 */
class IdempotentReflectiveProcessor implements ReflectiveProcessor {

	/**
	 * Wrappers whose first type argument is the value stored.
	 */
	private static final List<String> WRAPPERS = List.of("java.util.concurrent.CompletableFuture",
			"java.util.concurrent.CompletionStage", "reactor.core.publisher.Mono",
			"org.springframework.http.ResponseEntity", "org.springframework.http.HttpEntity");

	/**
	 * Parameters that are the framework's, not the application's payload: no binding
	 * hints for their members (Spring hints its own types where it needs to).
	 */
	private static final List<String> FRAMEWORK_PACKAGES = List.of("jakarta.", "javax.", "org.springframework.",
			"kotlin.", "kotlinx.", "reactor.", "com.rabbitmq.", "org.apache.kafka.");

	private final BindingReflectionHintsRegistrar bindings = new BindingReflectionHintsRegistrar();

	@Override
	public void registerReflectionHints(ReflectionHints hints, AnnotatedElement element) {
		// Kotlin copies the annotations of an open suspend function onto a synthetic
		// static twin that holds its body; the function itself is the one proxied.
		if (!(element instanceof Method method) || method.isSynthetic() || method.isBridge()) {
			return;
		}
		Idempotent idempotent = AnnotatedElementUtils.findMergedAnnotation(method, Idempotent.class);
		if (idempotent == null) {
			return;
		}
		hints.registerMethod(method, ExecutableMode.INVOKE);
		for (Class<? extends Throwable> type : idempotent.cacheFor()) {
			registerRecreatable(hints, type);
		}
		this.bindings.registerReflectionHints(hints, storedType(method).getType());
		Type[] parameters = method.getGenericParameterTypes();
		Class<?>[] rawParameters = method.getParameterTypes();
		for (int i = 0; i < parameters.length; i++) {
			if (!isFrameworkType(rawParameters[i])) {
				this.bindings.registerReflectionHints(hints, parameters[i]);
			}
		}
	}

	/**
	 * The constructors {@code StoredOutcome} looks for, in its order: one taking the
	 * message, else none.
	 */
	private static void registerRecreatable(ReflectionHints hints, Class<? extends Throwable> type) {
		hints.registerType(type);
		for (Class<?>[] parameters : new Class<?>[][] { { String.class }, {} }) {
			try {
				Constructor<?> constructor = type.getDeclaredConstructor(parameters);
				hints.registerConstructor(constructor, ExecutableMode.INVOKE);
			}
			catch (NoSuchMethodException ex) {
				// the other form, or the start-up check refuses the type
			}
		}
	}

	static ResolvableType storedType(Method method) {
		ResolvableType type = (KotlinDetector.isSuspendingFunction(method))
				? ResolvableType.forMethodParameter(new MethodParameter(method, -1))
				: ResolvableType.forMethodReturnType(method);
		for (String wrapper : WRAPPERS) {
			ResolvableType wrapped = as(type, wrapper);
			if (wrapped != ResolvableType.NONE) {
				type = wrapped.getGeneric(0);
			}
		}
		return type;
	}

	/**
	 * {@code type} seen as the named supertype, as {@link ResolvableType#as(Class)} would
	 * see it, or {@code NONE}.
	 */
	private static ResolvableType as(ResolvableType type, String name) {
		Class<?> raw = type.resolve();
		if (raw == null || raw == Object.class) {
			return ResolvableType.NONE;
		}
		if (raw.getName().equals(name)) {
			return type;
		}
		for (ResolvableType implemented : type.getInterfaces()) {
			ResolvableType found = as(implemented, name);
			if (found != ResolvableType.NONE) {
				return found;
			}
		}
		return as(type.getSuperType(), name);
	}

	private static boolean isFrameworkType(Class<?> type) {
		String name = type.getName();
		return FRAMEWORK_PACKAGES.stream().anyMatch(name::startsWith);
	}

}
