package io.github.idempotent.core;

import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * Supplies the scope of a call whose caller lives in its Reactor context rather than on
 * the calling thread: a {@code Mono} (or Kotlin {@code suspend}) method, any handler on
 * WebFlux, the template's {@code executeMono}. The reactive side of
 * {@link IdempotencyScopeResolver}, in an interface of its own so that the SPI names no
 * Reactor type and an application without Reactor never loads one; used only where
 * Reactor is present. Without a bean of this type, the application's
 * {@link IdempotencyScopeResolver} is asked on the subscribing thread (see
 * {@link #of(IdempotencyScopeResolver)}), or, for Spring Security's principal, with the
 * subscriber's security context bound to that thread.
 * <p>
 * As with the blocking side, a resolver that cannot tell who the caller is signals
 * {@link IdempotencyScopeException} rather than answer
 * {@link IdempotencyScopeResolver#GLOBAL}.
 */
@FunctionalInterface
public interface ReactiveIdempotencyScopeResolver {

	/**
	 * The scope of a call that subscribes with {@code context}.
	 */
	Mono<String> resolveScope(ContextView context);

	/**
	 * The reactive side of a blocking {@code resolver}: asks its
	 * {@link IdempotencyScopeResolver#resolveScope()} on the subscribing thread.
	 */
	static ReactiveIdempotencyScopeResolver of(IdempotencyScopeResolver resolver) {
		return (context) -> Mono.fromSupplier(resolver::resolveScope);
	}

}
