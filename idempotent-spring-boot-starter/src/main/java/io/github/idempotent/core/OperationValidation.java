package io.github.idempotent.core;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import org.springframework.core.MethodParameter;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.util.Assert;
import org.springframework.util.ClassUtils;

import io.github.idempotent.annotation.DuplicateHandling;

/**
 * What start-up reads of an {@code @Idempotent} method (its
 * {@link IdempotentOperation.Kind}, the type of the stored result) and refuses in it,
 * each refusal naming the method and what to do instead.
 */
final class OperationValidation {

	private static final String MONO = "reactor.core.publisher.Mono";

	private static final String REQUEST_MAPPING = "org.springframework.web.bind.annotation.RequestMapping";

	// CompletableFuture, CompletionStage and Mono are IdempotentOperation.Kind's.
	private static final List<String> UNSUPPORTED_RETURN_TYPES = List.of("java.util.concurrent.Future",
			"java.util.concurrent.CompletionStage", "java.util.concurrent.Callable", "java.util.stream.BaseStream",
			"org.reactivestreams.Publisher", "java.util.concurrent.Flow$Publisher",
			"org.springframework.web.context.request.async.DeferredResult",
			"org.springframework.web.context.request.async.WebAsyncTask",
			"org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter",
			"org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody",
			"org.springframework.core.io.Resource", "java.io.InputStream", "kotlinx.coroutines.flow.Flow");

	private static final List<String> HTTP_ENTITIES = List.of("org.springframework.http.ResponseEntity",
			"org.springframework.http.HttpEntity");

	private static final Pattern POSITIONAL = Pattern.compile("[ap]\\d+");

	private OperationValidation() {
	}

	static IdempotentOperation.Kind kind(Method method, ResolvableType returnType) {
		Class<?> raw = returnType.toClass();
		if (isSuspending(method) || raw.getName().equals(MONO)) {
			return IdempotentOperation.Kind.MONO;
		}
		return (raw == CompletableFuture.class || raw == CompletionStage.class) ? IdempotentOperation.Kind.FUTURE
				: IdempotentOperation.Kind.VALUE;
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

	static boolean isHandler(Method method) {
		return MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY).isPresent(REQUEST_MAPPING);
	}

	static void checkInterceptable(Method method) {
		int modifiers = method.getModifiers();
		String problem = Modifier.isPrivate(modifiers) ? "private"
				: Modifier.isStatic(modifiers) ? "static" : Modifier.isFinal(modifiers) ? "final" : null;
		Assert.state(problem == null,
				() -> "@Idempotent on " + method.getDeclaringClass().getName() + "#" + method.getName()
						+ " has no effect: the method is " + problem
						+ ", so Spring's proxy cannot intercept it and every call would run unprotected. "
						+ "Make it a public (or protected, or package-private), non-static, non-final method");
	}

	static void checkCacheFor(String where, Class<? extends Throwable>[] cacheFor) {
		for (Class<? extends Throwable> type : cacheFor) {
			Assert.state(StoredOutcome.isRecreatable(type), () -> "@Idempotent on " + where + ": cacheFor type "
					+ type.getName() + " needs a constructor taking a String message, or none, to be replayed");
		}
	}

	static void checkDuplicateHandling(String where, Method method, boolean handler, IdempotentOperation.Kind kind,
			DuplicateHandling onDuplicate) {
		Assert.state(onDuplicate == DuplicateHandling.REPLAY || !handler,
				() -> "@Idempotent on " + where + ": onDuplicate = " + onDuplicate
						+ " is not allowed on an HTTP handler method: its client retries because it lost the response, "
						+ "and must get that response again (REPLAY, the default). To answer duplicates yourself, put "
						+ "@Idempotent(onDuplicate = FLAG) on a service method the handler calls");
		boolean skipsValue = onDuplicate == DuplicateHandling.SKIP && kind == IdempotentOperation.Kind.VALUE;
		Class<?> returnType = method.getReturnType();
		Assert.state(!skipsValue || !returnType.isPrimitive() || returnType == void.class,
				() -> "@Idempotent on " + where + ": onDuplicate = SKIP returns null for a duplicate, which a method "
						+ "returning " + returnType.getName() + " cannot return. Return void or a wrapper type ("
						+ ClassUtils.resolvePrimitiveIfNecessary(returnType).getSimpleName()
						+ "), or use REPLAY or FLAG");
		Assert.state(!skipsValue || returnType != Optional.class, () -> "@Idempotent on " + where
				+ ": onDuplicate = SKIP returns null for a duplicate, which a caller of a method returning Optional "
				+ "does not expect. Return void or a nullable type, or use REPLAY or FLAG");
	}

	static void checkValueType(String where, ResolvableType returnType) {
		ResolvableType valueType = HTTP_ENTITIES.contains(returnType.toClass().getName()) ? returnType.getGeneric(0)
				: returnType;
		for (ResolvableType type : List.of(returnType, valueType)) {
			for (String name : UNSUPPORTED_RETURN_TYPES) {
				Assert.state(!IdempotentOperationSource.isA(type.toClass(), name), () -> "@Idempotent on " + where
						+ " cannot protect a method that returns " + type + ": its result arrives as a stream or "
						+ "through a handle whose completion cannot be observed, and storing the returned object would "
						+ "not store it. Return the value itself, a CompletableFuture, a CompletionStage or a Mono of "
						+ "it (collect a Flux with collectList()), or put @Idempotent on a method that does");
			}
		}
	}

	// Without names #request is null on every call: a 400, or no protection at all.
	static void checkNoParameterNames(String where, String attribute, Expression expression, boolean unnamed) {
		if (unnamed && expression instanceof SpelExpression spel) {
			String name = namedVariable(spel.getAST());
			Assert.state(name == null,
					() -> "@Idempotent on " + where + ": " + attribute + " expression '"
							+ expression.getExpressionString() + "' refers to the parameter #" + name
							+ ", but the class was compiled without parameter names. Compile with -parameters "
							+ "(maven-compiler-plugin <parameters>true</parameters>, as Spring Boot's parent POM does) "
							+ "or refer to the argument by position: #p0, #a0");
		}
	}

	private static @Nullable String namedVariable(SpelNode node) {
		if (node instanceof VariableReference) {
			String name = node.toStringAST().substring(1);
			if (!POSITIONAL.matcher(name).matches() && !name.equals("root") && !name.equals("this")) {
				return name;
			}
		}
		for (int i = 0; i < node.getChildCount(); i++) {
			String name = namedVariable(node.getChild(i));
			if (name != null) {
				return name;
			}
		}
		return null;
	}

}
