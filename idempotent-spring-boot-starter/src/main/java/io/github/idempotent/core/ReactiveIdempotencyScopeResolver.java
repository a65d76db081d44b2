package io.github.idempotent.core;

import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * Supplies the scope of a call whose caller lives in its Reactor context: a {@code Mono}
 * or {@code suspend} method, a WebFlux handler, the template's {@code executeMono}. Apart
 * from {@link IdempotencyScopeResolver} so that an application without Reactor never
 * loads a Reactor type. A resolver that cannot tell who the caller is signals
 * {@link IdempotencyScopeException}.
 * <p>
 * An empty answer means that the context names no caller. A {@code Mono} or
 * {@code suspend} method and {@code executeMono} then take the scope the
 * {@link IdempotencyScopeResolver} gave on the thread that called them, at the call (its
 * failure becomes the {@code Mono}'s error); a WebFlux handler's call fails. No call is
 * ever scoped by the thread that subscribes: a pool thread can carry another caller's
 * security context.
 */
@FunctionalInterface
public interface ReactiveIdempotencyScopeResolver {

	/** The scope of a call that subscribes with {@code context}. */
	Mono<String> resolveScope(ContextView context);

	/**
	 * The scope {@code resolver} gives. A {@code Mono} or {@code suspend} method and
	 * {@code executeMono} do not ask this one on subscription: they take what
	 * {@code resolver} answered on their calling thread, at the call. Any other caller (a
	 * WebFlux handler's call) has {@code resolver} asked on the thread that subscribes.
	 */
	static ReactiveIdempotencyScopeResolver of(IdempotencyScopeResolver resolver) {
		return new CallingThreadScope.Asking(resolver);
	}

}
