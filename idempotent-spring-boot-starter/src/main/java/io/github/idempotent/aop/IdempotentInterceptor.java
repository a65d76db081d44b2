package io.github.idempotent.aop;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import org.aopalliance.intercept.MethodInterceptor;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;

import reactor.core.Exceptions;
import reactor.core.publisher.Mono;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.util.Assert;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.core.Fingerprinter;
import io.github.idempotent.core.IdempotencyContext;
import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.core.IdempotencyExpressionException;
import io.github.idempotent.core.IdempotencyInProgressException;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.core.IdempotencyKeyException;
import io.github.idempotent.core.IdempotencyKeyResolver;
import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyPayloadException;
import io.github.idempotent.core.IdempotencyScopeResolver;
import io.github.idempotent.core.OutcomeRecorder;
import io.github.idempotent.aop.IdempotentCallObservations.ObservedCall;

/**
 * Applies {@code @Idempotent}: evaluates the key, scope and payload of a call against its
 * arguments and hands the call to the {@link IdempotencyExecutor}. No parsing and no
 * annotation lookup happen here beyond the first call of a method.
 */
public class IdempotentInterceptor implements MethodInterceptor {

	private static final Log logger = LogFactory.getLog(IdempotentInterceptor.class);

	private final IdempotentOperationSource operations;

	private final IdempotencyExecutor executor;

	private final Fingerprinter fingerprinter;

	private final IdempotencyKeyResolver keyResolver;

	private final IdempotencyScopeResolver scopeResolver;

	/**
	 * How many {@code @Idempotent} calls are running on this thread, one inside the
	 * other.
	 */
	private static final ThreadLocal<int[]> DEPTH = ThreadLocal.withInitial(() -> new int[1]);

	/**
	 * Longest scope: a principal name or a tenant id, never a payload.
	 */
	private static final int MAX_SCOPE_LENGTH = 1024;

	private final String keyPrefix;

	private final int maxKeyLength;

	private final @Nullable BeanFactoryResolver beanResolver;

	private static final boolean reactorPresent = ClassUtils.isPresent("reactor.core.publisher.Mono",
			IdempotentInterceptor.class.getClassLoader());

	/**
	 * The Mono path, created only when Reactor is present: the interceptor itself loads
	 * no Reactor class (the approach of Spring's {@code CacheAspectSupport}).
	 */
	private final @Nullable ReactiveCalls reactive;

	/**
	 * Observation of each call, when an observation registry is present; without one the
	 * calls take the paths they always took.
	 */
	private volatile @Nullable IdempotentCallObservations observations;

	private volatile @Nullable ResponseRecording responseRecording;

	public IdempotentInterceptor(IdempotentOperationSource operations, IdempotencyExecutor executor,
			Fingerprinter fingerprinter, IdempotencyKeyResolver keyResolver, IdempotencyScopeResolver scopeResolver,
			String keyPrefix, int maxKeyLength, @Nullable BeanFactory beanFactory) {
		Assert.hasText(keyPrefix, "keyPrefix must not be empty");
		Assert.isTrue(maxKeyLength > 0, "maxKeyLength must be positive");
		this.operations = operations;
		this.executor = executor;
		this.fingerprinter = fingerprinter;
		this.keyResolver = keyResolver;
		this.scopeResolver = scopeResolver;
		this.keyPrefix = keyPrefix;
		this.maxKeyLength = maxKeyLength;
		this.beanResolver = (beanFactory != null) ? new BeanFactoryResolver(beanFactory) : null;
		this.reactive = reactorPresent ? new ReactiveCalls() : null;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target) : null;
		IdempotentOperation operation = this.operations.get(invocation.getMethod(), targetClass);
		if (operation == null) {
			return invocation.proceed();
		}
		Object[] args = invocation.getArguments();
		Call call = new Call(operation, args, target);
		if (operation.kind() == IdempotentOperation.Kind.MONO) {
			Assert.state(this.reactive != null, () -> operation.describe() + " returns a Mono but Reactor is absent");
			return this.reactive.invoke(operation, call, invocation, targetClass);
		}
		String key = call.key();
		if (key == null) {
			if (operation.required()) {
				throw missingKey(operation);
			}
			return invocation.proceed();
		}
		validate(operation, "key", key, this.maxKeyLength);
		String scope = call.scope();
		validate(operation, "scope", scope, MAX_SCOPE_LENGTH);
		RecordKey storeKey = RecordKey.of(this.keyPrefix, scope, operation.policy().name(), key,
				this.executor.getStore().maxKeyLength());
		Fingerprint fingerprint = fingerprint(operation, call.payload());
		int[] depth = DEPTH.get();
		depth[0]++;
		try {
			ResponseRecording recording = this.responseRecording;
			// A nested call's outcome is never the response, whatever its method.
			OutcomeRecorder recorder = (recording != null && depth[0] == 1)
					? recording.recorderFor(invocation.getMethod(), targetClass) : null;
			IdempotentCallObservations observations = this.observations;
			ObservedCall observed = (observations != null) ? observations.start(operation.policy(), key, null) : null;
			if (observed != null) {
				return invokeObserved(operation, key, storeKey, fingerprint, invocation, observed, recorder);
			}
			if (operation.kind() == IdempotentOperation.Kind.FUTURE) {
				// A CompletableFuture is also a CompletionStage: it fits both
				// declarations.
				return this.executor.executeAsync(operation.policy(), key, storeKey, fingerprint,
						() -> (CompletionStage<?>) invocation.proceed(), IdempotencyObserver.NONE, recorder);
			}
			return this.executor.execute(operation.policy(), key, storeKey, fingerprint, invocation::proceed,
					IdempotencyObserver.NONE, recorder);
		}
		catch (IdempotencyInProgressException ex) {
			// Only this call's own refusal: one from a nested call of another
			// operation inside the method is the method's outcome, not a duplicate.
			if (!operation.dropsUnansweredDuplicates() || !ex.getOperation().equals(operation.policy().name())
					|| !ex.getKey().equals(key)) {
				throw ex;
			}
			dropped(operation, ex);
			return null;
		}
		finally {
			depth[0]--;
		}
	}

	/**
	 * A duplicate of an {@code @Async}, {@code @EventListener} or {@code @Scheduled}
	 * method that found the first call still running after its wait: thrown, it would
	 * reach an uncaught-exception handler as an error with a stack trace, and nothing
	 * would deliver it again. It is dropped instead, with one line that says so and how
	 * to wait longer; the observers have counted it as rejected.
	 */
	private static void dropped(IdempotentOperation operation, IdempotencyInProgressException ex) {
		logger.warn("Dropped a duplicate call of " + operation.describe() + " with key '" + ex.getKey() + "' of "
				+ ex.getOperation() + ": the first call still runs after " + operation.policy().waitFor().toMillis()
				+ " ms of waiting, and nothing will deliver this call again (the method is @Async, an event "
				+ "listener or @Scheduled). The first call's outcome stands. To wait longer, set "
				+ "idempotent.in-process-wait-for or @Idempotent(waitFor = ...) on the method");
	}

	private @Nullable Object invokeObserved(IdempotentOperation operation, String key, RecordKey storeKey,
			Fingerprint fingerprint, MethodInvocation invocation, ObservedCall observed,
			@Nullable OutcomeRecorder recorder) throws Throwable {
		if (operation.kind() == IdempotentOperation.Kind.FUTURE) {
			CompletableFuture<@Nullable Object> result;
			try (IdempotentCallObservations.Scope scope = observed.openScope()) {
				result = this.executor.executeAsync(operation.policy(), key, storeKey, fingerprint,
						() -> (CompletionStage<?>) invocation.proceed(), observed, recorder);
			}
			catch (Throwable ex) {
				observed.stop(ex);
				throw ex;
			}
			return stopOnCompletion(result, observed);
		}
		Throwable failure = null;
		try (IdempotentCallObservations.Scope scope = observed.openScope()) {
			return this.executor.execute(operation.policy(), key, storeKey, fingerprint, invocation::proceed, observed,
					recorder);
		}
		catch (Throwable ex) {
			failure = ex;
			throw ex;
		}
		finally {
			observed.stop(failure);
		}
	}

	/**
	 * The caller's future, completed once the observation has stopped, so that whoever
	 * sees the outcome also finds it recorded. Cancelling it cancels the executor's
	 * future (which detaches the caller, see {@link IdempotencyExecutor#executeAsync}).
	 */
	private static CompletableFuture<@Nullable Object> stopOnCompletion(CompletableFuture<@Nullable Object> result,
			ObservedCall observed) {
		CompletableFuture<@Nullable Object> observedResult = new CompletableFuture<>() {

			@Override
			public boolean cancel(boolean mayInterruptIfRunning) {
				result.cancel(mayInterruptIfRunning);
				return super.cancel(mayInterruptIfRunning);
			}

		};
		result.whenComplete((value, failure) -> {
			Throwable cause = (failure instanceof CompletionException && failure.getCause() != null)
					? failure.getCause() : failure;
			observed.stop(cause);
			if (cause != null) {
				observedResult.completeExceptionally(cause);
			}
			else {
				observedResult.complete(value);
			}
		});
		return observedResult;
	}

	/**
	 * Sets where a call of a web request's handler method gets the recorder that stores
	 * its response as written (Spring MVC); {@code null} to store every call's return
	 * value through the codec.
	 */
	public void setResponseRecording(@Nullable ResponseRecording responseRecording) {
		this.responseRecording = responseRecording;
	}

	/**
	 * Sets what observes each call (a Micrometer observation); {@code null} for none.
	 */
	public void setCallObservations(@Nullable IdempotentCallObservations observations) {
		this.observations = observations;
	}

	/**
	 * Whether the call being observed on this thread runs inside another
	 * {@code @Idempotent} call: its outcome is not the outcome of the request (an inner
	 * replay inside an outer first call must not mark the response as replayed).
	 */
	public static boolean isNestedCall() {
		return DEPTH.get()[0] > 1;
	}

	/**
	 * An argument the mapper cannot write fails every call the same way: reported as
	 * {@link IdempotencyPayloadException}, which message listeners treat as not
	 * retryable, instead of a mapper error that a broker would redeliver forever.
	 */
	private Fingerprint fingerprint(IdempotentOperation operation, @Nullable Object payload) {
		try {
			return this.fingerprinter.fingerprint(payload);
		}
		catch (JacksonException ex) {
			throw new IdempotencyPayloadException("Cannot fingerprint the payload of " + operation.describe() + ": "
					+ ex.getOriginalMessage() + ". Name what identifies the request with @Idempotent(payload = "
					+ "\"#event\"), or keep arguments the JSON mapper cannot write out of the method", ex);
		}
	}

	/**
	 * Sets where {@code Mono} calls take their key, scope and response marking from (the
	 * WebFlux exchange); without it they use the key expression and the thread-bound
	 * resolvers.
	 */
	public void setReactiveContext(@Nullable ReactiveIdempotencyContext reactiveContext) {
		if (this.reactive != null) {
			this.reactive.context = reactiveContext;
		}
	}

	private IdempotencyKeyException missingKey(IdempotentOperation operation) {
		return missingKey(operation, this.keyResolver.describeSource());
	}

	private IdempotencyKeyException missingKey(IdempotentOperation operation, String source) {
		if (operation.key() == null) {
			return new IdempotencyKeyException("Idempotency key is required: send it in " + source);
		}
		return new IdempotencyKeyException(
				"Idempotency key is required: the request field it is taken from is " + "missing or blank",
				"Idempotency key is required by " + operation.policy().name() + ": expression '"
						+ operation.key().getExpressionString() + "' of " + operation.describe()
						+ " evaluated to null or blank");
	}

	/**
	 * Checks a key or scope before it reaches the store, so that a store never sees a
	 * value it cannot keep apart from another (Redis writes a lone surrogate as '?') and
	 * a malformed value is the caller's 400, not a store failure (which would be a 503,
	 * or an unprotected run under {@code failure-mode=open}). Validated values are also
	 * safe to log.
	 */
	static void validate(IdempotentOperation operation, String what, String value, int maxLength) {
		if (value.length() > maxLength) {
			throw new IdempotencyKeyException(
					"Idempotency " + what + " is " + value.length() + " characters, longer than the " + maxLength
							+ " allowed; send a shorter key, such as a UUID",
					"Idempotency " + what + " of " + operation.policy().name() + " is " + value.length()
							+ " characters, longer than " + maxLength
							+ " (idempotent.max-key-length for keys); send a shorter key, such as a UUID");
		}
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			boolean bad;
			if (Character.isHighSurrogate(c)) {
				bad = i + 1 >= value.length() || !Character.isLowSurrogate(value.charAt(i + 1));
				i++;
			}
			else {
				bad = Character.isLowSurrogate(c) || Character.isISOControl(c);
			}
			if (bad) {
				throw new IdempotencyKeyException(
						"Idempotency " + what + " must be printable text; character " + (i + 1)
								+ " is a control character or a broken surrogate pair. Send a key such as a UUID",
						"Idempotency " + what + " of " + operation.policy().name() + " has a control character or "
								+ "a broken surrogate pair at position " + (i + 1));
			}
		}
	}

	/**
	 * Calls of methods that return a {@code Mono}, and of Kotlin {@code suspend}
	 * functions, which Spring's proxy hands to interceptors as a {@code Mono}. Nothing
	 * happens until subscription; then the key, scope and payload are evaluated, the key
	 * claimed without blocking (see {@link IdempotencyExecutor#executeNonBlocking}), and
	 * the method called and its {@code Mono} subscribed only by the call that owns the
	 * key. An empty {@code Mono} is a result: it is stored and replays as empty.
	 * <p>
	 * Cancellation (the client went away): the method's {@code Mono} is subscribed apart
	 * from the caller's subscription, with the caller's context, so cancelling the
	 * caller's subscription does not cancel a method that has started. It runs to
	 * completion and its outcome is stored; the client's retry gets it as a replay (or
	 * 409 while it still runs), rather than running the method a second time after a
	 * first run that may have had its side effects. A caller that cancels before the
	 * method started (while waiting for a duplicate, or before its claim returned)
	 * releases the key without running it.
	 */
	private final class ReactiveCalls {

		volatile @Nullable ReactiveIdempotencyContext context;

		Object invoke(IdempotentOperation operation, Call call, MethodInvocation invocation,
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
						return Mono.error(missingKey(operation, (context != null) ? context.describeSource()
								: IdempotentInterceptor.this.keyResolver.describeSource()));
					}
					return toMono(proceed(invocation));
				}
				validate(operation, "key", key, IdempotentInterceptor.this.maxKeyLength);
				String clientKey = key;
				Mono<String> scope = (operation.scope() != null || context == null) ? Mono.fromSupplier(call::scope)
						: context.resolveScope(contextView, IdempotentInterceptor.this.scopeResolver);
				IdempotencyObserver observer = (context != null) ? context.observer(contextView)
						: IdempotencyObserver.NONE;
				OutcomeRecorder recorder = recorder(context, contextView, invocation, targetClass);
				return scope.flatMap((resolvedScope) -> {
					validate(operation, "scope", resolvedScope, MAX_SCOPE_LENGTH);
					RecordKey storeKey = RecordKey.of(IdempotentInterceptor.this.keyPrefix, resolvedScope,
							operation.policy().name(), clientKey,
							IdempotentInterceptor.this.executor.getStore().maxKeyLength());
					Fingerprint fingerprint = fingerprint(operation, call.payload());
					IdempotentCallObservations observations = IdempotentInterceptor.this.observations;
					ObservedCall observed = (observations != null)
							? observations.start(operation.policy(), clientKey,
									contextView.getOrDefault(IdempotentCallObservations.REACTOR_CONTEXT_KEY, null))
							: null;
					if (observed != null) {
						return observe(observed, (callObserver) -> IdempotentInterceptor.this.executor
							.executeNonBlocking(operation.policy(), clientKey, storeKey, fingerprint, () -> {
								try (IdempotentCallObservations.Scope methodScope = observed.openScope()) {
									// The method's Mono sees this call as its parent
									// observation; written inside the subscriber's
									// context so that it wins over the subscriber's own.
									return withIdempotencyContext(toMono(proceed(invocation)))
										.contextWrite((methodContext) -> methodContext
											.put(IdempotentCallObservations.REACTOR_CONTEXT_KEY,
													observed.contextValue()))
										.contextWrite(contextView)
										.toFuture();
								}
							}, callObserver, recorder), observer);
					}
					CompletableFuture<@Nullable Object> result = IdempotentInterceptor.this.executor.executeNonBlocking(
							operation.policy(), clientKey, storeKey, fingerprint,
							() -> withIdempotencyContext(toMono(proceed(invocation))).contextWrite(contextView)
								.toFuture(),
							observer, recorder);
					// suppressCancel: a cancelled subscriber leaves the call running
					// (above).
					return Mono.fromFuture(result, true);
				});
			});
		}

		/**
		 * The observed call as a {@code Mono} whose subscriber sees the outcome only
		 * after the observation has stopped. A subscriber that cancels leaves the call
		 * running (see above): its observation stops when the call ends.
		 */
		private Mono<?> observe(ObservedCall observed,
				java.util.function.Function<IdempotencyObserver, CompletableFuture<@Nullable Object>> execution,
				IdempotencyObserver responseObserver) {
			IdempotencyObserver callObserver = (responseObserver == IdempotencyObserver.NONE) ? observed
					: IdempotencyObserver.composite(List.of(responseObserver, observed));
			CompletableFuture<@Nullable Object> result;
			try {
				result = execution.apply(callObserver);
			}
			catch (RuntimeException | Error ex) {
				// Thrown before a future existed: the observation must not stay open.
				observed.stop(ex);
				return Mono.error(ex);
			}
			return Mono.fromFuture(result, true)
				.doOnSuccess((value) -> observed.stop(null))
				.doOnError(observed::stop)
				.doOnCancel(() -> result.whenComplete((value, failure) -> observed
					.stop((failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
							: failure)));
		}

		/**
		 * The recorder of a call that handles a web request: from the exchange on
		 * WebFlux, else from the request bound to the subscribing thread (Spring MVC
		 * subscribes on the request's thread).
		 */
		private @Nullable OutcomeRecorder recorder(@Nullable ReactiveIdempotencyContext context,
				reactor.util.context.ContextView contextView, MethodInvocation invocation,
				@Nullable Class<?> targetClass) {
			if (context != null) {
				return context.recorder(contextView, invocation.getMethod(), targetClass);
			}
			ResponseRecording recording = IdempotentInterceptor.this.responseRecording;
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

		/**
		 * The method's {@code Mono} with this call's {@link IdempotencyContext} in its
		 * Reactor context: the thread that runs the method's operators is rarely the one
		 * the context is bound to. Read while the executor has it bound, before the
		 * subscription.
		 */
		private Mono<?> withIdempotencyContext(Mono<?> mono) {
			IdempotencyContext current = IdempotencyContext.current().orElse(null);
			return (current != null)
					? mono.contextWrite(
							(methodContext) -> methodContext.put(IdempotencyContext.REACTOR_CONTEXT_KEY, current))
					: mono;
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

	/**
	 * One call's evaluation; the SpEL context is created only if an expression needs it.
	 */
	private final class Call {

		private final IdempotentOperation operation;

		private final Object[] args;

		private final @Nullable Object target;

		private @Nullable EvaluationContext context;

		Call(IdempotentOperation operation, Object[] args, @Nullable Object target) {
			this.operation = operation;
			this.args = args;
			this.target = target;
		}

		@Nullable String key() {
			Expression expression = this.operation.key();
			Object value = (expression != null) ? evaluate(expression, "key")
					: IdempotentInterceptor.this.keyResolver.resolveKey();
			if (value == null) {
				return null;
			}
			String key = value.toString();
			return StringUtils.hasText(key) ? key : null;
		}

		String scope() {
			Expression expression = this.operation.scope();
			if (expression == null) {
				return IdempotentInterceptor.this.scopeResolver.resolveScope();
			}
			Object value = evaluate(expression, "scope");
			if (value == null || !StringUtils.hasText(value.toString())) {
				throw new IdempotencyKeyException(
						"The request has no scope for its idempotency key: the request field it is taken from is "
								+ "missing or blank",
						"Scope expression '" + expression.getExpressionString() + "' of " + this.operation.describe()
								+ " evaluated to null or blank; every call needs a scope");
			}
			return value.toString();
		}

		@Nullable Object payload() {
			Expression expression = this.operation.payload();
			if (expression != null) {
				return evaluate(expression, "payload");
			}
			int[] positions = this.operation.payloadArguments();
			if (positions.length == this.args.length && !MessagePayloads.anyMessage(this.args)) {
				return this.args;
			}
			Object[] payload = new Object[positions.length];
			for (int i = 0; i < positions.length; i++) {
				payload[i] = MessagePayloads.payloadOf(this.args[positions[i]]);
			}
			return payload;
		}

		private @Nullable Object evaluate(Expression expression, String attribute) {
			try {
				return expression.getValue(context());
			}
			catch (EvaluationException ex) {
				// The expression does not fit the arguments: a bug of the application,
				// not of the request, so a server error (500) rather than a 400.
				throw new IdempotencyExpressionException(
						"Cannot evaluate " + attribute + " expression '" + expression.getExpressionString() + "' of "
								+ this.operation.describe() + ": " + ex.getMessage(),
						ex);
			}
		}

		private EvaluationContext context() {
			if (this.context == null) {
				ArgumentsEvaluationContext context = new ArgumentsEvaluationContext(this.target,
						this.operation.variables(), this.args, IdempotentInterceptor.this.keyResolver::resolveVariable);
				if (IdempotentInterceptor.this.beanResolver != null) {
					context.setBeanResolver(IdempotentInterceptor.this.beanResolver);
				}
				this.context = context;
			}
			return this.context;
		}

	}

}
