package io.github.idempotent.core;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.Callable;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.Expression;

import io.github.idempotent.core.IdempotencyExecutor.ResponseCapture;
import io.github.idempotent.store.Fingerprint;

import io.github.idempotent.store.RecordKey;

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
	 * Runs the dispatch of a request to this operation's handler {@code method}, whose
	 * key or scope comes from its arguments, with the rest from the request: on the
	 * dispatching thread, for Spring MVC.
	 * @param scope the caller's scope, or {@code null} when an expression names it
	 * @param capture where the executor answers, for a response recorded
	 */
	public <T> T dispatch(Method method, @Nullable String key, @Nullable String scope, Fingerprint fingerprint,
			ResponseCapture capture, Callable<T> dispatch) throws Exception {
		return HandlerCall.dispatch(new HandlerCall(method, key, scope, fingerprint, capture), dispatch);
	}

	/**
	 * The same for WebFlux: what to write into the context of the {@code Mono} the
	 * handler {@code method} returns.
	 */
	public Map<String, Object> dispatchContext(Method method, @Nullable String key, @Nullable String scope,
			Fingerprint fingerprint, ResponseCapture capture) {
		return Map.of(HandlerCall.CONTEXT_KEY, new HandlerCall(method, key, scope, fingerprint, capture));
	}

	/** Whether the key or scope comes from the arguments by an expression. */
	public boolean needsArguments() {
		return this.key != null || this.scope != null;
	}

	/** The record of {@code key} under {@code scope}, the key checked first. */
	public RecordKey recordKey(IdempotencyExecutor executor, String scope, String key) {
		checkKey(executor, key);
		return executor.recordKey(this.policy.name(), scope, key);
	}

	// A key expression's key is the application's to fix; the header's, the caller's.
	void checkKey(IdempotencyExecutor executor, String key) {
		executor.checkKey(this.policy.name(), key, (this.key != null) ? "its key expression" : null);
	}

	/**
	 * The failure of a call whose reactive scope resolver answered an empty {@code Mono}:
	 * it fails rather than run unscoped.
	 * @param request {@code " for "} the request, or empty outside one
	 */
	public static IdempotencyScopeException noScope(Object resolver, String request) {
		return new IdempotencyScopeException("The ReactiveIdempotencyScopeResolver " + resolver.getClass().getName()
				+ " resolved no scope (an empty Mono)" + request + ": the caller is unknown. Answer a scope for "
				+ "every caller, or an error for one it cannot tell");
	}

	// A future hands its caller the failure, and a primitive has no value for "nothing".
	boolean dropsUnansweredDuplicates() {
		Class<?> returnType = this.method.getReturnType();
		return this.unretried && this.kind == Kind.VALUE && (returnType == void.class || !returnType.isPrimitive());
	}

	/** How a method hands back its result, which decides when its key is completed. */
	public enum Kind {

		VALUE,

		/** A {@code CompletableFuture} or {@code CompletionStage}. */
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
