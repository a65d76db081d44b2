package io.github.idempotent.aop;

import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.util.Assert;

import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.core.IdempotencyKeyResolver;
import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyScopeException;
import io.github.idempotent.core.IdempotencyScopeResolver;
import io.github.idempotent.core.IdempotentCalls;
import io.github.idempotent.core.OutcomeRecorder;
import io.github.idempotent.core.ReactiveIdempotencyScopeResolver;
import io.github.idempotent.core.ReactiveIdempotentCalls;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;

/**
 * The reactive adapter of {@code @Idempotent}: calls of methods that return a
 * {@code Mono}, and of Kotlin {@code suspend} functions, which Spring's proxy hands to
 * interceptors as a {@code Mono}. Whatever reactive type the method's own code returns is
 * adapted through Spring's {@link ReactiveAdapterRegistry}. Nothing happens until
 * subscription; then the key, scope and payload are evaluated, the key claimed without
 * blocking (see {@link IdempotencyExecutor#executeNonBlocking}), and the method called
 * and its {@code Mono} subscribed only by the call that owns the key. An empty
 * {@code Mono} is a result: it is stored and replays as empty.
 * <p>
 * Cancellation (the client went away): the method's {@code Mono} is subscribed apart from
 * the caller's subscription, with the caller's context, so cancelling the caller's
 * subscription does not cancel a method that has started. It runs to completion and its
 * outcome is stored; the client's retry gets it as a replay (or 409 while it still runs),
 * rather than running the method a second time after a first run that may have had its
 * side effects. A caller that cancels before the method started (while waiting for a
 * duplicate, or before its claim returned) releases the key without running it.
 */
final class MonoInvocations {

	private final IdempotentCalls calls;

	private final IdempotencyKeyResolver keyResolver;

	/**
	 * The application's reactive scope resolver; until one is set, its blocking one asked
	 * on the subscribing thread.
	 */
	volatile ReactiveIdempotencyScopeResolver scopeResolver;

	MonoInvocations(IdempotentCalls calls, IdempotencyKeyResolver keyResolver, IdempotencyScopeResolver scopeResolver) {
		this.calls = calls;
		this.keyResolver = keyResolver;
		this.scopeResolver = ReactiveIdempotencyScopeResolver.of(scopeResolver);
	}

	/**
	 * A call of a method that is not an HTTP handler: its key from its expression or the
	 * context's resolver (a message's id), its scope from its expression or the
	 * subscriber's context.
	 */
	Mono<?> invoke(IdempotentOperation operation, InvocationArguments call, MethodInvocation invocation) {
		return Mono.deferContextual((contextView) -> {
			String key = call.key();
			if (key == null) {
				if (operation.required()) {
					return Mono.error(IdempotentInterceptor.missingKey(operation, this.keyResolver.describeSource()));
				}
				return toMono(proceed(invocation));
			}
			Mono<String> scope = (operation.scope() != null) ? Mono.fromSupplier(call::scope)
					: callersScope(contextView);
			return execute(operation, invocation, key, scope, call, contextView, IdempotencyObserver.NONE, null);
		});
	}

	/**
	 * A call of an HTTP handler (or Kotlin {@code suspend} handler) whose key or scope
	 * comes from its arguments: the rest comes from the {@link HandlerCall} the web layer
	 * put in the Reactor context of the handler's {@code Mono}, which only this call's
	 * subscriber sees.
	 */
	Mono<?> invokeHandler(IdempotentOperation operation, MethodInvocation invocation, @Nullable Class<?> targetClass,
			@Nullable BeanFactoryResolver beanResolver, @Nullable HandlerCall dispatched) {
		return Mono.deferContextual((contextView) -> {
			HandlerCall handlerCall = (dispatched != null) ? dispatched
					: contextView.getOrDefault(HandlerCall.CONTEXT_KEY, null);
			if (handlerCall == null || !handlerCall.handles(invocation.getMethod(), targetClass)) {
				return Mono.error(IdempotentInterceptor.outsideRequest(operation));
			}
			InvocationArguments call = IdempotentInterceptor.handlerArguments(operation, invocation, handlerCall,
					beanResolver);
			String key = call.key();
			if (key == null) {
				if (operation.required()) {
					return Mono.error(IdempotentInterceptor.missingKey(operation, "the Idempotency-Key header"));
				}
				return toMono(proceed(invocation));
			}
			return execute(operation, invocation, key, Mono.fromSupplier(call::scope), call, contextView,
					handlerCall.observer(), handlerCall.recorder(), handlerCall.fingerprint());
		});
	}

	private Mono<?> execute(IdempotentOperation operation, MethodInvocation invocation, String key, Mono<String> scope,
			InvocationArguments call, ContextView contextView, IdempotencyObserver observer,
			@Nullable OutcomeRecorder recorder) {
		return execute(operation, invocation, key, scope, call, contextView, observer, recorder, null);
	}

	private Mono<?> execute(IdempotentOperation operation, MethodInvocation invocation, String key, Mono<String> scope,
			InvocationArguments call, ContextView contextView, IdempotencyObserver observer,
			@Nullable OutcomeRecorder recorder, @Nullable Fingerprint requestFingerprint) {
		IdempotentInterceptor.checkKey(this.calls, operation, key);
		return scope.flatMap((resolvedScope) -> {
			RecordKey recordKey = this.calls.recordKey(operation.policy().name(), resolvedScope, key);
			Fingerprint fingerprint = (requestFingerprint != null) ? requestFingerprint
					: IdempotentInterceptor.fingerprint(this.calls, operation, call.payload());
			return ReactiveIdempotentCalls.execute(this.calls, operation.policy(), key, recordKey, fingerprint,
					() -> toMono(proceed(invocation)), contextView, observer, recorder);
		});
	}

	/**
	 * The caller's scope from the subscriber's context (the reactive security context); a
	 * resolver that answers with nothing has not found the caller, and the call fails
	 * rather than run under no scope. A listener's call that the resolver finds no caller
	 * for is no one's (see {@link InvocationArguments#scope()}).
	 */
	private Mono<String> callersScope(ContextView contextView) {
		boolean callerless = this.keyResolver.isCallerless();
		ReactiveIdempotencyScopeResolver resolver = this.scopeResolver;
		return resolver.resolveScope(contextView)
			.switchIfEmpty(Mono.error(() -> new IdempotencyScopeException("The ReactiveIdempotencyScopeResolver "
					+ resolver.getClass().getName() + " resolved no scope (an empty Mono): the caller is "
					+ "unknown. Answer a scope for every caller, or an error for one it cannot tell")))
			.onErrorResume(IdempotencyScopeException.class,
					(ex) -> callerless ? Mono.just(IdempotencyScopeResolver.GLOBAL) : Mono.error(ex));
	}

	private @Nullable Object proceed(MethodInvocation invocation) {
		try {
			return invocation.proceed();
		}
		catch (RuntimeException | Error ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw Exceptions.propagate(ex);
		}
	}

	private Mono<?> toMono(@Nullable Object returned) {
		if (returned == null) {
			return Mono.empty();
		}
		ReactiveAdapter adapter = ReactiveAdapterRegistry.getSharedInstance().getAdapter(returned.getClass());
		Assert.state(adapter != null, () -> "Cannot adapt " + returned.getClass().getName() + " to a Mono");
		return Mono.from(adapter.toPublisher(returned));
	}

}
