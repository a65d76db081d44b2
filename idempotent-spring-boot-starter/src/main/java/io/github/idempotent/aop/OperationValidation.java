package io.github.idempotent.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.List;

import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.util.ClassUtils;

import io.github.idempotent.annotation.DuplicateHandling;
import io.github.idempotent.core.IdempotencyExecutor;

/**
 * What start-up refuses in an {@code @Idempotent} method, each with a message that names
 * the method and says what to do instead: a method the proxy cannot intercept, a result
 * that cannot be stored, an exception that cannot be replayed, a duplicate handling the
 * method cannot honour.
 */
final class OperationValidation {

	/**
	 * Marks a web handler method, directly or through {@code @PostMapping} and the other
	 * shortcuts, on the method or on the interface method it implements. Matched by name,
	 * so that no web library is needed.
	 */
	private static final String REQUEST_MAPPING = "org.springframework.web.bind.annotation.RequestMapping";

	/**
	 * Return types whose value is not the result and that are not supported: it arrives
	 * later as a stream (Flux, Kotlin Flow, SSE emitters, streaming bodies) or through a
	 * handle whose completion cannot be observed (a plain {@code Future}, Spring MVC's
	 * deferred results). Storing such an object would store its state, not its result,
	 * and a replay would never complete; they are refused at start-up.
	 * {@code CompletableFuture}, {@code CompletionStage}, {@code Mono} and Kotlin
	 * {@code suspend} functions are supported, see {@link IdempotentOperation.Kind}.
	 */
	private static final List<String> UNSUPPORTED_RETURN_TYPES = List.of("java.util.concurrent.Future",
			"java.util.concurrent.CompletionStage", "java.util.concurrent.Callable", "java.util.stream.BaseStream",
			"org.reactivestreams.Publisher", "java.util.concurrent.Flow$Publisher",
			"org.springframework.web.context.request.async.DeferredResult",
			"org.springframework.web.context.request.async.WebAsyncTask",
			"org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter",
			"org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody",
			"org.springframework.core.io.Resource", "java.io.InputStream", "kotlinx.coroutines.flow.Flow");

	private OperationValidation() {
	}

	/**
	 * Whether the method handles HTTP requests: it is mapped with {@code @RequestMapping}
	 * or one of its shortcuts.
	 */
	static boolean isHandler(Method method) {
		return MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY).isPresent(REQUEST_MAPPING);
	}

	/**
	 * A method the class-based proxy cannot intercept would run unprotected on every
	 * call: refuse it at start-up instead.
	 */
	static void checkInterceptable(Method method) {
		int modifiers = method.getModifiers();
		String problem = Modifier.isPrivate(modifiers) ? "private"
				: Modifier.isStatic(modifiers) ? "static" : Modifier.isFinal(modifiers) ? "final" : null;
		if (problem != null) {
			throw new IllegalStateException("@Idempotent on " + method.getDeclaringClass().getName() + "#"
					+ method.getName() + " has no effect: the method is " + problem
					+ ", so Spring's proxy cannot intercept it and every call would run unprotected. "
					+ "Make it a public (or protected, or package-private), non-static, non-final method");
		}
	}

	static void checkCacheFor(String where, Class<? extends Throwable>[] cacheFor) {
		for (Class<? extends Throwable> type : cacheFor) {
			if (!IdempotencyExecutor.isRecreatable(type)) {
				throw new IllegalStateException("@Idempotent on " + where + ": cacheFor type " + type.getName()
						+ " needs a constructor taking a String message, or none, to be replayed");
			}
		}
	}

	/**
	 * Refuses the duplicate handling a method cannot honour. An HTTP handler's client
	 * retries because it lost the response, and the contract is that it gets that
	 * response again: {@code SKIP} would answer an empty success it cannot tell from the
	 * real one, {@code FLAG} a second, different response, and neither could be marked as
	 * a replay. Refused rather than warned about, since either one quietly breaks what
	 * the client relies on; a handler that answers duplicates itself calls a service
	 * method that has {@code FLAG}. {@code SKIP} on a method that returns a primitive
	 * would fail on every duplicate, as {@code null} cannot be returned; on one that
	 * returns {@code Optional} it would break the caller, which never expects
	 * {@code null}.
	 */
	static void checkDuplicateHandling(String where, Method method, IdempotentOperation.Kind kind,
			DuplicateHandling onDuplicate) {
		if (onDuplicate == DuplicateHandling.REPLAY) {
			return;
		}
		if (isHandler(method)) {
			throw new IllegalStateException("@Idempotent on " + where + ": onDuplicate = " + onDuplicate
					+ " is not allowed on an HTTP handler method: its client retries because it lost the response, "
					+ "and must get that response again (REPLAY, the default). To answer duplicates yourself, put "
					+ "@Idempotent(onDuplicate = FLAG) on a service method the handler calls");
		}
		Class<?> returnType = method.getReturnType();
		if (onDuplicate == DuplicateHandling.SKIP && kind == IdempotentOperation.Kind.VALUE && returnType.isPrimitive()
				&& returnType != void.class) {
			throw new IllegalStateException("@Idempotent on " + where + ": onDuplicate = SKIP returns null for a "
					+ "duplicate, which a method returning " + returnType.getName() + " cannot return. Return void "
					+ "or a wrapper type (" + ClassUtils.resolvePrimitiveIfNecessary(returnType).getSimpleName()
					+ "), or use REPLAY or FLAG");
		}
		if (onDuplicate == DuplicateHandling.SKIP && kind == IdempotentOperation.Kind.VALUE
				&& returnType == java.util.Optional.class) {
			throw new IllegalStateException("@Idempotent on " + where + ": onDuplicate = SKIP returns null for a "
					+ "duplicate, which a caller of a method returning Optional does not expect. Return void or a "
					+ "nullable type, or use REPLAY or FLAG");
		}
	}

	static void checkValueType(String where, ResolvableType returnType) {
		ResolvableType valueType = returnType;
		if ("org.springframework.http.ResponseEntity".equals(returnType.toClass().getName())
				|| "org.springframework.http.HttpEntity".equals(returnType.toClass().getName())) {
			valueType = returnType.getGeneric(0);
		}
		for (ResolvableType type : List.of(returnType, valueType)) {
			for (String name : UNSUPPORTED_RETURN_TYPES) {
				if (IdempotentOperationSource.isA(type.toClass(), name)) {
					throw unsupported(where, type.toString());
				}
			}
		}
	}

	private static IllegalStateException unsupported(String where, String what) {
		return new IllegalStateException("@Idempotent on " + where + " cannot protect a method that returns " + what
				+ ": its result arrives as a stream or through a handle whose completion cannot be observed, and "
				+ "storing the returned object would not store it. Return the value itself, a CompletableFuture, "
				+ "a CompletionStage or a Mono of it (collect a Flux with collectList()), "
				+ "or put @Idempotent on a method that does");
	}

}
