package io.github.idempotent.core;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * The scope a blocking {@link IdempotencyScopeResolver} gave on the thread that called a
 * {@code Mono} method or {@code executeMono}, taken at the call: the scope of such a call
 * whose Reactor context names no caller. Never asked on the subscribing thread, which can
 * be a pool thread that carries another caller's security context. A failure is kept and
 * surfaces as the {@code Mono}'s error, and only if the Reactor context does not answer.
 * Loaded only on the paths of {@code Mono} calls, where Reactor is.
 */
final class CallingThreadScope {

	private final @Nullable String scope;

	private final @Nullable RuntimeException failure;

	private CallingThreadScope(@Nullable String scope, @Nullable RuntimeException failure) {
		this.scope = scope;
		this.failure = failure;
	}

	/**
	 * Asks, on the calling thread, the blocking resolver behind {@code reactive} if it is
	 * one of {@link ReactiveIdempotencyScopeResolver#of}, else {@code resolver}.
	 */
	static CallingThreadScope take(IdempotencyScopeResolver resolver, ReactiveIdempotencyScopeResolver reactive) {
		IdempotencyScopeResolver asked = (reactive instanceof Asking asking) ? asking.resolver : resolver;
		try {
			return new CallingThreadScope(asked.resolveScope(), null);
		}
		catch (RuntimeException ex) {
			// Not thrown at the call: the Reactor context may yet name the caller.
			return new CallingThreadScope(null, ex);
		}
	}

	/**
	 * The scope of a call that subscribes with {@code context}: the caller of the context
	 * as {@code reactive} tells it, else (an empty answer) this one. A blank scope is
	 * refused with the record key.
	 */
	Mono<String> or(ReactiveIdempotencyScopeResolver reactive, ContextView context) {
		// A blocking resolver knows nothing of the Reactor context: not asked again.
		Mono<String> callers = (reactive instanceof Asking) ? Mono.empty() : reactive.resolveScope(context);
		return callers.switchIfEmpty(Mono.fromSupplier(this::get));
	}

	private String get() {
		if (this.failure != null) {
			throw this.failure;
		}
		return (this.scope != null) ? this.scope : "";
	}

	/** {@link ReactiveIdempotencyScopeResolver#of}. */
	static final class Asking implements ReactiveIdempotencyScopeResolver {

		private final IdempotencyScopeResolver resolver;

		Asking(IdempotencyScopeResolver resolver) {
			this.resolver = resolver;
		}

		@Override
		public Mono<String> resolveScope(ContextView context) {
			return Mono.fromSupplier(this.resolver::resolveScope);
		}

	}

}
