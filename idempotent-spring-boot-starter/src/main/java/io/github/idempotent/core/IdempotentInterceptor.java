package io.github.idempotent.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import org.aopalliance.intercept.MethodInterceptor;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.util.Assert;
import org.springframework.util.ClassUtils;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;

/**
 * Applies {@code @Idempotent}: evaluates a call's key, scope and payload and runs it
 * through {@link IdempotencyExecutor}.
 */
class IdempotentInterceptor implements MethodInterceptor {

	private static final Log logger = LogFactory.getLog(IdempotentInterceptor.class);

	private final IdempotentOperationSource operations;

	private final IdempotencyExecutor executor;

	private final IdempotencyKeyResolver keyResolver;

	private final IdempotencyScopeResolver scopeResolver;

	private final BeanFactoryResolver beanResolver;

	private static final boolean reactorPresent = ClassUtils.isPresent("reactor.core.publisher.Mono",
			IdempotentInterceptor.class.getClassLoader());

	// Only with Reactor present: this class itself loads no Reactor class.
	private final @Nullable MonoInvocations reactive;

	IdempotentInterceptor(IdempotentOperationSource operations, IdempotencyExecutor executor,
			IdempotencyKeyResolver keyResolver, IdempotencyScopeResolver scopeResolver, BeanFactory beanFactory) {
		this.operations = operations;
		this.executor = executor;
		this.keyResolver = keyResolver;
		this.scopeResolver = scopeResolver;
		this.beanResolver = new BeanFactoryResolver(beanFactory);
		this.reactive = reactorPresent ? new MonoInvocations(this.executor, scopeResolver) : null;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target) : null;
		IdempotentOperation operation = this.operations.get(invocation.getMethod(), targetClass);
		if (operation == null) {
			return invocation.proceed();
		}
		if (operation.handler()) {
			return invokeHandler(operation, invocation, targetClass);
		}
		InvocationArguments call = new InvocationArguments(operation, invocation, this.keyResolver, this.scopeResolver,
				this.beanResolver, null);
		// The container's translation of failures, for a listener method that returns a
		// future or a Mono: its container acknowledges it once that completes.
		AsyncListenerFailures.Translation listenerFailures = (operation.kind() != IdempotentOperation.Kind.VALUE
				&& operation.messageListener()) ? AsyncListenerFailures.current() : null;
		if (operation.kind() == IdempotentOperation.Kind.MONO) {
			return reactive(operation).invoke(operation, call, invocation, listenerFailures);
		}
		Object result = execute(operation, invocation, call);
		return (listenerFailures != null && result instanceof CompletionStage<?> stage)
				? translated(stage, listenerFailures) : result;
	}

	private static CompletableFuture<@Nullable Object> translated(CompletionStage<?> stage,
			AsyncListenerFailures.Translation failures) {
		CompletableFuture<@Nullable Object> translated = new CompletableFuture<>();
		stage.whenComplete((value, failure) -> {
			if (failure == null) {
				translated.complete(value);
			}
			else {
				Throwable cause = Futures.unwrap(failure);
				Throwable answer = failures.failures().apply(cause);
				long delay = failures.delayOf(cause).toMillis();
				// Held back without a thread, for a requeue redelivered at once.
				Executor after = (delay > 0) ? CompletableFuture.delayedExecutor(delay, TimeUnit.MILLISECONDS)
						: Runnable::run;
				after.execute(() -> translated.completeExceptionally(answer));
			}
		});
		return translated;
	}

	/**
	 * A handler whose key or scope comes from its arguments, with the rest from the
	 * {@link HandlerCall} of its request; refused without one.
	 */
	private @Nullable Object invokeHandler(IdempotentOperation operation, MethodInvocation invocation,
			@Nullable Class<?> targetClass) throws Throwable {
		// Spring MVC binds it here, even for a Mono handler; WebFlux in the context.
		HandlerCall handlerCall = HandlerCall.take(invocation.getMethod(), targetClass);
		if (operation.kind() == IdempotentOperation.Kind.MONO) {
			return reactive(operation).invokeHandler(operation, invocation, targetClass, this.beanResolver,
					handlerCall);
		}
		if (handlerCall == null) {
			throw outsideRequest(operation);
		}
		return execute(operation, invocation,
				InvocationArguments.ofHandler(operation, invocation, handlerCall, this.beanResolver));
	}

	static IllegalStateException outsideRequest(IdempotentOperation operation) {
		return new IllegalStateException("@Idempotent HTTP handler " + operation.describe() + " was called outside "
				+ "the request it handles (by the application's own code, or on a thread of its own), so its caller, "
				+ "key and response are unknown: refused rather than run unguarded. Call a service method that has "
				+ "@Idempotent(key = ..., scope = ...) instead");
	}

	private MonoInvocations reactive(IdempotentOperation operation) {
		Assert.state(this.reactive != null, () -> operation.describe() + " returns a Mono but Reactor is absent");
		return this.reactive;
	}

	private @Nullable Object execute(IdempotentOperation operation, MethodInvocation invocation,
			InvocationArguments call) throws Throwable {
		String clientKey = call.key();
		if (clientKey == null) {
			return invocation.proceed();
		}
		String scope = call.scope();
		Fingerprint fingerprint = call.fingerprint(this.executor);
		RecordKey recordKey = operation.recordKey(this.executor, scope, clientKey);
		try {
			if (operation.kind() == IdempotentOperation.Kind.FUTURE) {
				return this.executor.executeAsync(operation.policy(), clientKey, recordKey, fingerprint,
						() -> (CompletionStage<?>) invocation.proceed(), call.capture());
			}
			return this.executor.execute(operation.policy(), clientKey, recordKey, fingerprint, invocation::proceed,
					call.capture());
		}
		catch (IdempotencyInProgressException ex) {
			// A nested call's refusal is this method's outcome, not a duplicate.
			if (!operation.dropsUnansweredDuplicates() || !ex.getOperation().equals(operation.policy().name())
					|| !ex.getKey().equals(clientKey)) {
				throw ex;
			}
			logger.warn("Dropped a duplicate call of " + operation.describe() + " with key '" + ex.getKey() + "' of "
					+ ex.getOperation() + ": the first call still runs after " + operation.policy().waitFor().toMillis()
					+ " ms of waiting, and nothing will deliver this call again (the method is @Async, an event "
					+ "listener or @Scheduled). The first call's outcome stands. To wait longer, set "
					+ "idempotent.in-process-wait-for or @Idempotent(waitFor = ...) on the method");
			return null;
		}
	}

	/**
	 * Sets the scope resolver of {@code Mono} calls whose annotation names no scope.
	 * Where it answers empty, or without one, a call has the scope the blocking resolver
	 * gave on its calling thread at the call, never on the subscribing thread.
	 */
	public void setReactiveScopeResolver(ReactiveIdempotencyScopeResolver scopeResolver) {
		if (this.reactive != null) {
			this.reactive.scopeResolver = scopeResolver;
		}
	}

}
