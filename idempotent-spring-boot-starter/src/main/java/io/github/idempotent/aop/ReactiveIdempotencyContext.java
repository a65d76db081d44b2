package io.github.idempotent.aop;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.ReactiveIdempotencyScopeResolver;
import io.github.idempotent.core.OutcomeRecorder;

/**
 * What a {@code Mono} (or Kotlin {@code suspend}) call, and any call that handles a
 * WebFlux request, takes from its subscriber's Reactor context instead of the calling
 * thread, which on an event loop belongs to no request: the key and scope of a call whose
 * annotation names none, and the observer that marks its response. WebFlux's
 * implementation reads the {@code ServerWebExchange} and the reactive security context.
 */
public interface ReactiveIdempotencyContext {

	/**
	 * The key of the call, or {@code null} when the context has none.
	 * @throws io.github.idempotent.core.IdempotencyKeyException when a key is present but
	 * malformed
	 */
	@Nullable String resolveKey(ContextView context);

	/**
	 * The scope of the call; {@code resolver} is the application's, which an
	 * implementation asks unless it knows better.
	 */
	Mono<String> resolveScope(ContextView context, ReactiveIdempotencyScopeResolver resolver);

	/**
	 * The observer told about this call's outcome (the response to mark), in addition to
	 * the application's observers.
	 */
	default IdempotencyObserver observer(ContextView context) {
		return IdempotencyObserver.NONE;
	}

	/**
	 * The recorder that stores the response of a call of {@code method} on a bean of
	 * {@code targetClass} as written, or {@code null} when that call is not the handler
	 * of the request in {@code context}.
	 */
	default @Nullable OutcomeRecorder recorder(ContextView context, Method method, @Nullable Class<?> targetClass) {
		return null;
	}

	/**
	 * The Reactor context of the request that the current thread works for, for a call of
	 * a method that returns no {@code Mono} (a WebFlux handler that returns a
	 * {@code CompletableFuture} or a plain value), or {@code null} when none is known:
	 * such a call then takes its key, scope and marking from it as a {@code Mono} call
	 * does.
	 */
	default @Nullable ContextView currentContext() {
		return null;
	}

	/**
	 * Where the key comes from, for the message that tells a caller what to send.
	 */
	String describeSource();

}
