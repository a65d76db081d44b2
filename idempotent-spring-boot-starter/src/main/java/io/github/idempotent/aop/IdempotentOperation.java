package io.github.idempotent.aop;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.Expression;

import io.github.idempotent.core.IdempotencyPolicy;

/**
 * Parsed form of one {@code @Idempotent} method: everything the per-call path needs, so
 * that it evaluates and never parses.
 *
 * @param method the annotated method
 * @param policy the operation's resolved settings
 * @param key key expression, {@code null} to take the key from the context (the header)
 * @param payload payload expression, {@code null} to fingerprint {@code payloadArguments}
 * @param scope scope expression, {@code null} to take the scope from the resolver
 * @param required whether a call without a key is refused
 * @param payloadArguments positions of the arguments fingerprinted by default
 * @param variables names under which expressions see the arguments
 * @param kind how the method hands back its result
 * @param unretried whether nobody retries a call refused as in progress (an
 * {@code @Async}, {@code @EventListener} or {@code @Scheduled} method)
 * @param handler whether the method handles HTTP requests ({@code @RequestMapping})
 */
public record IdempotentOperation(Method method, IdempotencyPolicy policy, @Nullable Expression key,
		@Nullable Expression payload, @Nullable Expression scope, boolean required, int[] payloadArguments,
		ArgumentsEvaluationContext.Variables variables, Kind kind, boolean unretried, boolean handler) {

	/**
	 * Whether a call needs its arguments before its key can be claimed: a key or a scope
	 * taken from them by an expression. A handler that needs none is guarded by the web
	 * layer before its arguments are resolved.
	 */
	public boolean needsArguments() {
		return this.key != null || this.scope != null;
	}

	/**
	 * Whether a duplicate that is still refused as in progress after its wait is dropped
	 * with a warning instead of thrown: nobody would retry it, and the exception would
	 * only reach an uncaught-exception handler. A method that returns a future hands its
	 * caller the failure instead, and one that returns a primitive has no value for
	 * "nothing".
	 */
	boolean dropsUnansweredDuplicates() {
		Class<?> returnType = this.method.getReturnType();
		return this.unretried && this.kind == Kind.VALUE && (returnType == void.class || !returnType.isPrimitive());
	}

	/**
	 * How a method hands back its result, which decides when its key is completed.
	 */
	public enum Kind {

		/**
		 * Returns its result (or throws) on the calling thread.
		 */
		VALUE,

		/**
		 * Returns a {@code CompletableFuture} or {@code CompletionStage} of its result.
		 */
		FUTURE,

		/**
		 * Returns a {@code Mono} of its result, or is a Kotlin {@code suspend} function
		 * (which Spring's proxy hands to interceptors as a {@code Mono}): nothing happens
		 * until subscription.
		 */
		MONO

	}

	public String describe() {
		return this.method.getDeclaringClass().getName() + "#" + this.method.getName();
	}

}
