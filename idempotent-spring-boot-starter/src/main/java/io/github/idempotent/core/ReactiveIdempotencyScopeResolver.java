package io.github.idempotent.core;

import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * Supplies the scope of a call whose caller lives in its Reactor context: a {@code Mono}
 * or {@code suspend} method, a WebFlux handler, the template's {@code executeMono}. Apart
 * from {@link IdempotencyScopeResolver} so that an application without Reactor never
 * loads a Reactor type. A resolver that cannot tell who the caller is signals
 * {@link IdempotencyScopeException}.
 */
@FunctionalInterface
public interface ReactiveIdempotencyScopeResolver {

	/** The scope of a call that subscribes with {@code context}. */
	Mono<String> resolveScope(ContextView context);

	/** Asks {@code resolver} on the subscribing thread. */
	static ReactiveIdempotencyScopeResolver of(IdempotencyScopeResolver resolver) {
		return (context) -> Mono.fromSupplier(resolver::resolveScope);
	}

}
