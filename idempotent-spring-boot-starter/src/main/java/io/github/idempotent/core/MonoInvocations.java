package io.github.idempotent.core;

import java.time.Duration;
import java.util.function.Function;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.util.Assert;

import io.github.idempotent.store.RecordKey;

/**
 * Calls of {@code @Idempotent} methods that return a {@code Mono}, or are Kotlin
 * {@code suspend} functions: evaluated on subscription and claimed without blocking. A
 * cancelled caller never cancels a method that has started (docs/guide.md). A call whose
 * Reactor context names no caller has the scope of its calling thread at the call
 * ({@link CallingThreadScope}).
 */
final class MonoInvocations {

	private final IdempotencyExecutor executor;

	private final IdempotencyScopeResolver callingThreadResolver;

	volatile ReactiveIdempotencyScopeResolver scopeResolver;

	MonoInvocations(IdempotencyExecutor executor, IdempotencyScopeResolver scopeResolver) {
		this.executor = executor;
		this.callingThreadResolver = scopeResolver;
		this.scopeResolver = ReactiveIdempotencyScopeResolver.of(scopeResolver);
	}

	Mono<?> invoke(IdempotentOperation operation, InvocationArguments call, MethodInvocation invocation,
			AsyncListenerFailures.@Nullable Translation listenerFailures) {
		Supplier<MethodInvocation> invocations = perSubscription(invocation);
		// Here, on the thread that calls the method: never on the one that subscribes.
		Function<ContextView, Mono<String>> callers = (operation.scope() != null) ? null
				: CallingThreadScope.take(this.callingThreadResolver, this.scopeResolver);
		Mono<?> mono = Mono.deferContextual(
				(contextView) -> execute(operation, invocations.get(), call,
						(callers == null) ? Mono.fromSupplier(call::scope)
								: callers.apply(contextView)
									.onErrorResume(IdempotencyScopeException.class, (ex) -> call.handlesMessage()
											? Mono.just(IdempotencyScopeResolver.GLOBAL) : Mono.error(ex)),
						contextView));
		return (listenerFailures != null) ? mono.cast(Object.class).onErrorResume((failure) -> {
			Mono<Object> answer = Mono.error(listenerFailures.failures().apply(failure));
			Duration delay = listenerFailures.delayOf(failure);
			// Held back, for a requeue the container sends again at once.
			return delay.isZero() ? answer : Mono.delay(delay).then(answer);
		}) : mono;
	}

	Mono<?> invokeHandler(IdempotentOperation operation, MethodInvocation invocation, @Nullable Class<?> targetClass,
			BeanFactoryResolver beanResolver, @Nullable HandlerCall dispatched) {
		Supplier<MethodInvocation> invocations = perSubscription(invocation);
		return Mono.deferContextual((contextView) -> {
			HandlerCall handlerCall = (dispatched != null) ? dispatched
					: contextView.getOrDefault(HandlerCall.CONTEXT_KEY, null);
			if (handlerCall == null || !handlerCall.handles(invocation.getMethod(), targetClass)) {
				return Mono.error(IdempotentInterceptor.outsideRequest(operation));
			}
			InvocationArguments call = InvocationArguments.ofHandler(operation, invocation, handlerCall, beanResolver);
			// A handler's caller comes with its request.
			return execute(operation, invocations.get(), call, Mono.fromSupplier(call::scope), contextView);
		});
	}

	/**
	 * A fresh invocation for each subscription: one that has proceeded once goes straight
	 * to the method when it proceeds again, past the advice behind this one (a
	 * transaction, a security check), and a Mono is subscribed again by a caller's
	 * {@code retry()} after a failure released its key. Cloned before it proceeds, as
	 * {@link ProxyMethodInvocation#invocableClone()} requires.
	 */
	private static Supplier<MethodInvocation> perSubscription(MethodInvocation invocation) {
		if (!(invocation instanceof ProxyMethodInvocation proxied)) {
			return () -> invocation;
		}
		ProxyMethodInvocation template = (ProxyMethodInvocation) proxied.invocableClone();
		return template::invocableClone;
	}

	private Mono<?> execute(IdempotentOperation operation, MethodInvocation invocation, InvocationArguments call,
			Mono<String> scope, ContextView contextView) {
		String key = call.key();
		if (key == null) {
			return toMono(proceed(invocation));
		}
		operation.checkKey(this.executor, key);
		return scope.flatMap((resolvedScope) -> {
			RecordKey recordKey = this.executor.recordKey(operation.policy().name(), resolvedScope, key);
			return IdempotencyExecutor.ReactiveCalls.execute(this.executor, operation.policy(), key, recordKey,
					call.fingerprint(this.executor), () -> toMono(proceed(invocation)), contextView, call.capture());
		});
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
