package io.github.idempotent.aop;

import java.lang.reflect.Method;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.Expression;

import io.github.idempotent.core.IdempotencyPolicy;

/**
 * Parsed form of one {@code @Idempotent} method: everything a call evaluates.
 *
 * @param key key expression, {@code null} to take the key from the context (the header)
 * @param payload payload expression, {@code null} to fingerprint {@code payloadArguments}
 * @param scope scope expression, {@code null} to take the scope from the resolver
 * @param unretried whether nobody retries a call refused as in progress ({@code @Async},
 * {@code @EventListener}, {@code @Scheduled})
 * @param messageListener whether a listener container calls it ({@code @RabbitListener},
 * {@code @KafkaListener}, {@code @JmsListener}, on the method or its class)
 */
public record IdempotentOperation(Method method, IdempotencyPolicy policy, @Nullable Expression key,
		@Nullable Expression payload, @Nullable Expression scope, boolean required, int[] payloadArguments,
		Map<String, Integer> variables, Kind kind, boolean unretried, boolean handler, boolean messageListener) {

	/**
	 * Whether the key or scope comes from the arguments by an expression.
	 */
	public boolean needsArguments() {
		return this.key != null || this.scope != null;
	}

	// A future hands its caller the failure, and a primitive has no value for "nothing".
	boolean dropsUnansweredDuplicates() {
		Class<?> returnType = this.method.getReturnType();
		return this.unretried && this.kind == Kind.VALUE && (returnType == void.class || !returnType.isPrimitive());
	}

	/**
	 * How a method hands back its result, which decides when its key is completed.
	 */
	public enum Kind {

		VALUE,

		/**
		 * A {@code CompletableFuture} or {@code CompletionStage}.
		 */
		FUTURE,

		/**
		 * A {@code Mono}, or a Kotlin {@code suspend} function, which Spring's proxy
		 * hands to interceptors as one.
		 */
		MONO

	}

	public String describe() {
		return this.method.getDeclaringClass().getName() + "#" + this.method.getName();
	}

}
