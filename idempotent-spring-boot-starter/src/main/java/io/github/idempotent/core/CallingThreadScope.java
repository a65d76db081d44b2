package io.github.idempotent.core;

import java.util.Objects;
import java.util.function.Function;

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

	private CallingThreadScope() {
	}

	/**
	 * Asks now, on the calling thread, the blocking resolver behind {@code reactive} if
	 * it is one of {@link ReactiveIdempotencyScopeResolver#of}, else {@code resolver}.
	 * The scope of a call that subscribes with a context is then its caller as
	 * {@code reactive} tells it, else (an empty answer) the one asked now. A blank scope
	 * is refused with the record key.
	 */
	static Function<ContextView, Mono<String>> take(IdempotencyScopeResolver resolver,
			ReactiveIdempotencyScopeResolver reactive) {
		Mono<String> callingThread = ask((reactive instanceof Asking asking) ? asking.resolver : resolver);
		// A blocking resolver knows nothing of the Reactor context: not asked again.
		return (reactive instanceof Asking) ? (context) -> callingThread
				: (context) -> reactive.resolveScope(context).switchIfEmpty(callingThread);
	}

	private static Mono<String> ask(IdempotencyScopeResolver resolver) {
		try {
			return Mono.just(Objects.requireNonNullElse(resolver.resolveScope(), ""));
		}
		catch (RuntimeException ex) {
			// Not thrown at the call: the Reactor context may yet name the caller.
			return Mono.error(ex);
		}
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
