package io.github.idempotent.aop;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyScopeResolver;
import io.github.idempotent.core.OutcomeRecorder;

/**
 * What a {@code Mono} (or Kotlin {@code suspend}) call takes from its subscriber's
 * Reactor context instead of the calling thread, which on an event loop belongs to no
 * request: the key and scope of a call whose annotation names none, and the observer that
 * marks its response. WebFlux's implementation reads the {@code ServerWebExchange} and
 * the reactive security context.
 */
public interface ReactiveIdempotencyContext {

	/**
	 * The key of the call, or {@code null} when the context has none.
	 * @throws io.github.idempotent.core.IdempotencyKeyException when a key is present but
	 * malformed
	 */
	@Nullable String resolveKey(ContextView context);

	/**
	 * The scope of the call; {@code fallback} is the application's thread-bound resolver.
	 */
	Mono<String> resolveScope(ContextView context, IdempotencyScopeResolver fallback);

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
	 * Where the key comes from, for the message that tells a caller what to send.
	 */
	String describeSource();

}
