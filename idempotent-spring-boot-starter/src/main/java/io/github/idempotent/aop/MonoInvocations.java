package io.github.idempotent.aop;

import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;

import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.util.Assert;
import org.springframework.util.StringUtils;

import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.core.IdempotencyKeyResolver;
import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyScopeResolver;
import io.github.idempotent.core.IdempotentCalls;
import io.github.idempotent.core.OutcomeRecorder;
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

	private final IdempotencyScopeResolver scopeResolver;

	private final Supplier<@Nullable ResponseRecording> responseRecording;

	volatile @Nullable ReactiveIdempotencyContext context;

	MonoInvocations(IdempotentCalls calls, IdempotencyKeyResolver keyResolver, IdempotencyScopeResolver scopeResolver,
			Supplier<@Nullable ResponseRecording> responseRecording) {
		this.calls = calls;
		this.keyResolver = keyResolver;
		this.scopeResolver = scopeResolver;
		this.responseRecording = responseRecording;
	}

	Object invoke(IdempotentOperation operation, InvocationArguments call, MethodInvocation invocation,
			@Nullable Class<?> targetClass) {
		return Mono.deferContextual((contextView) -> {
			ReactiveIdempotencyContext context = this.context;
			String key;
			if (operation.key() != null || context == null) {
				key = call.key();
			}
			else {
				key = context.resolveKey(contextView);
				key = StringUtils.hasText(key) ? key : null;
			}
			if (key == null) {
				if (operation.required()) {
					return Mono.error(IdempotentInterceptor.missingKey(operation,
							(context != null) ? context.describeSource() : this.keyResolver.describeSource()));
				}
				return toMono(proceed(invocation));
			}
			IdempotentInterceptor.checkKey(this.calls, operation, key);
			String clientKey = key;
			Mono<String> scope = (operation.scope() != null || context == null) ? Mono.fromSupplier(call::scope)
					: context.resolveScope(contextView, this.scopeResolver);
			IdempotencyObserver observer = (context != null) ? context.observer(contextView) : IdempotencyObserver.NONE;
			OutcomeRecorder recorder = recorder(context, contextView, invocation, targetClass);
			return scope.flatMap((resolvedScope) -> {
				RecordKey recordKey = this.calls.recordKey(operation.policy().name(), resolvedScope, clientKey);
				Fingerprint fingerprint = IdempotentInterceptor.fingerprint(this.calls, operation, call.payload());
				return ReactiveIdempotentCalls.execute(this.calls, operation.policy(), clientKey, recordKey,
						fingerprint, () -> toMono(proceed(invocation)), contextView, observer, recorder);
			});
		});
	}

	/**
	 * The recorder of a call that handles a web request: from the exchange on WebFlux,
	 * else from the request bound to the subscribing thread (Spring MVC subscribes on the
	 * request's thread).
	 */
	private @Nullable OutcomeRecorder recorder(@Nullable ReactiveIdempotencyContext context,
			reactor.util.context.ContextView contextView, MethodInvocation invocation, @Nullable Class<?> targetClass) {
		if (context != null) {
			return context.recorder(contextView, invocation.getMethod(), targetClass);
		}
		ResponseRecording recording = this.responseRecording.get();
		return (recording != null) ? recording.recorderFor(invocation.getMethod(), targetClass) : null;
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
