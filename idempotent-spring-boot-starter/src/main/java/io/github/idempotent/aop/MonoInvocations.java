package io.github.idempotent.aop;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.util.Assert;
import org.springframework.util.StringUtils;

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

	/**
	 * What {@link #invokeForRequest} answers when the thread works for no request.
	 */
	static final Object NO_REQUEST = new Object();

	private final IdempotentCalls calls;

	private final IdempotencyKeyResolver keyResolver;

	private final Supplier<@Nullable ResponseRecording> responseRecording;

	/**
	 * The application's reactive scope resolver; until one is set, its blocking one asked
	 * on the subscribing thread.
	 */
	volatile ReactiveIdempotencyScopeResolver scopeResolver;

	volatile @Nullable ReactiveIdempotencyContext context;

	MonoInvocations(IdempotentCalls calls, IdempotencyKeyResolver keyResolver, IdempotencyScopeResolver scopeResolver,
			Supplier<@Nullable ResponseRecording> responseRecording) {
		this.calls = calls;
		this.keyResolver = keyResolver;
		this.scopeResolver = ReactiveIdempotencyScopeResolver.of(scopeResolver);
		this.responseRecording = responseRecording;
	}

	Object invoke(IdempotentOperation operation, InvocationArguments call, MethodInvocation invocation,
			@Nullable Class<?> targetClass) {
		return invoke(operation, call, invocation, targetClass, this::toMono);
	}

	/**
	 * A call of a method that returns a future or a plain value, made for a request whose
	 * Reactor context the thread knows (a WebFlux handler, whose thread carries neither
	 * the key nor the caller): the {@code Mono} path with that context, handed back as
	 * the method's own kind of result; a plain value is waited for, as the blocking path
	 * would. {@link #NO_REQUEST} when the thread works for no request.
	 */
	@Nullable Object invokeForRequest(IdempotentOperation operation, InvocationArguments call, MethodInvocation invocation,
			@Nullable Class<?> targetClass) throws Throwable {
		ReactiveIdempotencyContext context = this.context;
		ContextView contextView = (context != null) ? context.currentContext() : null;
		if (contextView == null) {
			return NO_REQUEST;
		}
		if (operation.kind() == IdempotentOperation.Kind.FUTURE) {
			return invoke(operation, call, invocation, targetClass, this::toMono).contextWrite(contextView).toFuture();
		}
		CompletableFuture<?> result = invoke(operation, call, invocation, targetClass, Mono::justOrEmpty)
			.contextWrite(contextView)
			.contextWrite((waiting) -> waiting.put(ReactiveIdempotentCalls.CALLER_WAITS, true))
			.toFuture();
		try {
			return result.join();
		}
		catch (CompletionException ex) {
			throw Exceptions.unwrap((ex.getCause() != null) ? ex.getCause() : ex);
		}
	}

	private Mono<?> invoke(IdempotentOperation operation, InvocationArguments call, MethodInvocation invocation,
			@Nullable Class<?> targetClass, Function<@Nullable Object, Mono<?>> adapter) {
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
				return adapter.apply(proceed(invocation));
			}
			IdempotentInterceptor.checkKey(this.calls, operation, key);
			String clientKey = key;
			Mono<String> scope = scope(operation, call, context, contextView);
			IdempotencyObserver observer = (context != null) ? context.observer(contextView) : IdempotencyObserver.NONE;
			OutcomeRecorder recorder = recorder(context, contextView, invocation, targetClass);
			return scope.flatMap((resolvedScope) -> {
				RecordKey recordKey = this.calls.recordKey(operation.policy().name(), resolvedScope, clientKey);
				Fingerprint fingerprint = IdempotentInterceptor.fingerprint(this.calls, operation, call.payload());
				return ReactiveIdempotentCalls.execute(this.calls, operation.policy(), clientKey, recordKey,
						fingerprint, () -> adapter.apply(proceed(invocation)), contextView, observer, recorder);
			});
		});
	}

	/**
	 * The scope a call names, else the resolver's for the subscriber's context; a
	 * listener's call that the resolver finds no caller for is no one's (see
	 * {@link InvocationArguments#scope()}).
	 */
	private Mono<String> scope(IdempotentOperation operation, InvocationArguments call,
			@Nullable ReactiveIdempotencyContext context, ContextView contextView) {
		if (operation.scope() != null) {
			return Mono.fromSupplier(call::scope);
		}
		Mono<String> resolved = (context != null) ? context.resolveScope(contextView, this.scopeResolver)
				: this.scopeResolver.resolveScope(contextView);
		boolean callerless = this.keyResolver.isCallerless();
		return resolved.onErrorResume(IdempotencyScopeException.class,
				(ex) -> callerless ? Mono.just(IdempotencyScopeResolver.GLOBAL) : Mono.error(ex));
	}

	/**
	 * The recorder of a call that handles a web request: from the exchange on WebFlux,
	 * else from the request bound to the subscribing thread (Spring MVC subscribes on the
	 * request's thread).
	 */
	private @Nullable OutcomeRecorder recorder(@Nullable ReactiveIdempotencyContext context, ContextView contextView,
			MethodInvocation invocation, @Nullable Class<?> targetClass) {
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
