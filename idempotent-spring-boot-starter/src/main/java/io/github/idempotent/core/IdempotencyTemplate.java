package io.github.idempotent.core;

import java.lang.reflect.Type;
import java.lang.reflect.UndeclaredThrowableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.core.ParameterizedTypeReference;
import org.springframework.core.ResolvableType;
import org.springframework.util.Assert;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

import io.github.idempotent.annotation.DuplicateHandling;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;

/**
 * Runs any piece of code at most once per key, with the stores, guarantees and failure
 * mode of {@code @Idempotent}, where the annotation cannot reach: a function bean, a
 * scheduled job, a step inside a method, a key known only at run time.
 *
 * <pre class="code">
 * Receipt receipt = idempotency.operation("payments")
 *     .key(idempotencyKey)
 *     .payload(request)
 *     .execute(Receipt.class, () -&gt; payments.charge(request));
 * </pre>
 *
 * A later call with the key and an equal payload gets the stored result without running
 * the callback. Thread-safe; the {@link OperationSpec} from {@link #operation} is not.
 *
 * @see io.github.idempotent.annotation.Idempotent
 */
public class IdempotencyTemplate {

	private static final boolean reactorPresent = ClassUtils.isPresent("reactor.core.publisher.Mono",
			IdempotencyTemplate.class.getClassLoader());

	private final IdempotencyExecutor executor;

	private final ResultCodec codec;

	private final IdempotencyScopeResolver scopeResolver;

	private @Nullable ReactiveIdempotencyScopeResolver reactiveScopeResolver;

	private final Map<Type, ResultCodec.Binding> bindings = new ConcurrentHashMap<>();

	/**
	 * A template whose calls take their keys, fingerprints, observations and the settings
	 * they name none of ({@code ttl}, {@code lease}, ...) as {@code executor} sets them.
	 */
	public IdempotencyTemplate(IdempotencyExecutor executor, ResultCodec codec,
			IdempotencyScopeResolver scopeResolver) {
		Assert.notNull(executor, "executor must not be null");
		Assert.notNull(codec, "codec must not be null");
		Assert.notNull(scopeResolver, "scopeResolver must not be null");
		this.executor = executor;
		this.codec = codec;
		this.scopeResolver = scopeResolver;
	}

	/**
	 * Sets the resolver {@code executeMono} calls take their scope from; {@code null} for
	 * none. Where it answers empty, or there is none, a call takes the scope the blocking
	 * resolver gave on the thread that called {@code executeMono}, never on the
	 * subscribing thread.
	 */
	public void setReactiveScopeResolver(@Nullable ReactiveIdempotencyScopeResolver reactiveScopeResolver) {
		this.reactiveScopeResolver = reactiveScopeResolver;
	}

	/**
	 * Starts describing a call of the operation {@code name}, which is part of the record
	 * key and tags metrics (keep it low-cardinality).
	 */
	public OperationSpec operation(String name) {
		Assert.hasText(name, "IdempotencyTemplate needs an operation name, such as \"payments\": it is part of "
				+ "every stored key and names the operation in metrics");
		return new OperationSpec(name);
	}

	private record Prepared(IdempotencyPolicy policy, String key, RecordKey recordKey, Fingerprint fingerprint) {
	}

	/** One call of an operation: its key, scope, payload, settings and callback. */
	public final class OperationSpec {

		private final String name;

		private @Nullable String key;

		private @Nullable String scope;

		private @Nullable Object payload;

		private @Nullable String fingerprint;

		private @Nullable Duration ttl;

		private @Nullable Duration lease;

		private @Nullable Duration waitFor;

		private @Nullable Duration retryAfter;

		private @Nullable Duration maxDuration;

		private final List<Class<? extends Throwable>> cacheFor = new ArrayList<>();

		private DuplicateHandling duplicates = DuplicateHandling.REPLAY;

		private OperationSpec(String name) {
			this.name = name;
		}

		/** The call's key: required, at most {@code idempotent.max-key-length} long. */
		public OperationSpec key(@Nullable String key) {
			this.key = key;
			return this;
		}

		/** The key's scope (tenant, user); default {@code idempotent.default-scope}. */
		public OperationSpec scope(String scope) {
			this.scope = scope;
			return this;
		}

		/** What identifies the request: another payload under the key is refused. */
		public OperationSpec payload(@Nullable Object payload) {
			this.payload = payload;
			return this;
		}

		/** A fingerprint computed by the application, used instead of a payload's. */
		public OperationSpec fingerprint(String fingerprint) {
			Assert.hasText(fingerprint, () -> "fingerprint of " + this.name + " must not be empty: pass a hash of "
					+ "what identifies the request, or payload(...) to have it computed");
			this.fingerprint = fingerprint;
			return this;
		}

		/** How long the result is replayed; {@code idempotent.ttl} by default. */
		public OperationSpec ttl(Duration ttl) {
			this.ttl = ttl;
			return this;
		}

		/** How long the key is held unrenewed; {@code idempotent.lease} by default. */
		public OperationSpec lease(Duration lease) {
			this.lease = lease;
			return this;
		}

		/** A duplicate's wait before refusal; default {@code idempotent.wait-for}. */
		public OperationSpec waitFor(Duration waitFor) {
			this.waitFor = waitFor;
			return this;
		}

		/** Delay a refused duplicate is told; default {@code idempotent.retry-after}. */
		public OperationSpec retryAfter(Duration retryAfter) {
			this.retryAfter = retryAfter;
			return this;
		}

		/** Longest a call may hold its key; default {@code idempotent.max-duration}. */
		public OperationSpec maxDuration(Duration maxDuration) {
			this.maxDuration = maxDuration;
			return this;
		}

		/** An exception type stored and replayed; any other releases the key. */
		public OperationSpec cacheFor(Class<? extends Throwable> exceptionType) {
			Assert.notNull(exceptionType, "exceptionType must not be null");
			Assert.isTrue(StoredOutcome.isRecreatable(exceptionType), () -> "cacheFor type " + exceptionType.getName()
					+ " of " + this.name + " needs a constructor taking a String message, or none, to be replayed");
			this.cacheFor.add(exceptionType);
			return this;
		}

		/** What a call does when its key has completed: replay, skip or flag. */
		public OperationSpec duplicates(DuplicateHandling duplicates) {
			Assert.notNull(duplicates, "duplicates must not be null");
			this.duplicates = duplicates;
			return this;
		}

		/**
		 * Runs {@code callback} once for the key and returns its result, or the stored
		 * result of the call that ran.
		 * @throws IdempotencyKeyException if the key is missing or invalid
		 * @throws IdempotencyKeyReusedException if the key was used with another payload
		 * @throws IdempotencyInProgressException if the first call still runs after
		 * {@code waitFor}
		 * @throws IdempotencyStoreUnavailableException if the store cannot be reached and
		 * the failure mode is closed
		 */
		public <T> @Nullable T execute(Class<T> resultType, Supplier<? extends @Nullable T> callback) {
			Assert.notNull(resultType, "resultType must not be null");
			return execute(ParameterizedTypeReference.forType(resultType), callback);
		}

		/** {@link #execute(Class, Supplier)} for a generic result type. */
		@SuppressWarnings("unchecked")
		public <T> @Nullable T execute(ParameterizedTypeReference<T> resultType,
				Supplier<? extends @Nullable T> callback) {
			Assert.notNull(resultType, "resultType must not be null");
			Assert.notNull(callback, "callback must not be null");
			Prepared call = prepare(resultType.getType(), null);
			try {
				return (T) IdempotencyTemplate.this.executor.execute(call.policy(), call.key(), call.recordKey(),
						call.fingerprint(), callback::get, null);
			}
			catch (RuntimeException | Error ex) {
				throw ex;
			}
			catch (Throwable ex) {
				// A sneaky-thrown checked exception, or one replayed from cacheFor.
				throw new UndeclaredThrowableException(ex);
			}
		}

		/** Runs {@code callback}, which returns nothing, once for the key. */
		public void run(Runnable callback) {
			Assert.notNull(callback, "callback must not be null");
			execute(Void.class, () -> {
				callback.run();
				return null;
			});
		}

		/**
		 * Runs the asynchronous {@code callback} once for the key, which is completed or
		 * released when its stage completes. Refusals complete the future exceptionally;
		 * cancelling it leaves a started callback running.
		 */
		public <T> CompletableFuture<@Nullable T> executeAsync(Class<T> resultType,
				Supplier<? extends CompletionStage<? extends @Nullable T>> callback) {
			Assert.notNull(resultType, "resultType must not be null");
			return executeAsync(ParameterizedTypeReference.forType(resultType), callback);
		}

		/** {@link #executeAsync(Class, Supplier)} for a generic result type. */
		@SuppressWarnings("unchecked")
		public <T> CompletableFuture<@Nullable T> executeAsync(ParameterizedTypeReference<T> resultType,
				Supplier<? extends CompletionStage<? extends @Nullable T>> callback) {
			Assert.notNull(resultType, "resultType must not be null");
			Assert.notNull(callback, "callback must not be null");
			Prepared call;
			try {
				call = prepare(resultType.getType(), null);
			}
			catch (IdempotencyException | IdempotencyScopeException ex) {
				return CompletableFuture.failedFuture(ex);
			}
			CompletableFuture<@Nullable Object> result = IdempotencyTemplate.this.executor.executeAsync(call.policy(),
					call.key(), call.recordKey(), call.fingerprint(), callback::get, null);
			return (CompletableFuture<@Nullable T>) (CompletableFuture<?>) result;
		}

		/**
		 * Runs the {@code Mono} of {@code callback} once for the key, on subscription and
		 * without blocking; needs Reactor.
		 */
		public <T> Mono<T> executeMono(Class<T> resultType, Supplier<? extends Mono<? extends T>> callback) {
			Assert.notNull(resultType, "resultType must not be null");
			return executeMono(ParameterizedTypeReference.forType(resultType), callback);
		}

		/** {@link #executeMono(Class, Supplier)} for a generic result type. */
		public <T> Mono<T> executeMono(ParameterizedTypeReference<T> resultType,
				Supplier<? extends Mono<? extends T>> callback) {
			Assert.notNull(resultType, "resultType must not be null");
			Assert.state(reactorPresent, "executeMono needs Reactor (io.projectreactor:reactor-core)");
			Assert.notNull(callback, "callback must not be null");
			// Reactor is touched only from here on. A Mono's caller lives in its
			// context, else on this thread: never on the subscribing thread.
			IdempotencyScopeResolver resolver = IdempotencyTemplate.this.scopeResolver;
			ReactiveIdempotencyScopeResolver reactive = IdempotencyTemplate.this.reactiveScopeResolver;
			return MonoCalls.execute(IdempotencyTemplate.this.executor,
					(this.scope != null) ? null
							: CallingThreadScope.take(resolver,
									(reactive != null) ? reactive : ReactiveIdempotencyScopeResolver.of(resolver)),
					(scope) -> prepare(resultType.getType(), scope), callback);
		}

		/** {@code resolvedScope}: the scope of a reactive call, or {@code null}. */
		private Prepared prepare(Type resultType, @Nullable String resolvedScope) {
			String key = this.key;
			if (!StringUtils.hasText(key)) {
				throw new IdempotencyKeyException("Idempotency key is required",
						"Idempotency key is required by operation '" + this.name + "': IdempotencyTemplate got "
								+ ((key == null) ? "no key" : "a blank key")
								+ "; pass the request's key (a header, a message id, a job's run) to key(...)");
			}
			IdempotencyExecutor executor = IdempotencyTemplate.this.executor;
			executor.checkKey(this.name, key, "the application (IdempotencyTemplate key(...))");
			String scope = (this.scope != null) ? this.scope
					: (resolvedScope != null) ? resolvedScope : IdempotencyTemplate.this.scopeResolver.resolveScope();
			if (!StringUtils.hasText(scope)) {
				throw new IdempotencyKeyException("The request has no scope for its idempotency key",
						"Scope of operation '" + this.name + "' is blank; pass a scope (a tenant, a user) to "
								+ "scope(...), or leave it out for the default scope");
			}
			RecordKey recordKey = executor.recordKey(this.name, scope, key);
			Fingerprint fingerprint = (this.fingerprint != null) ? new Fingerprint(this.fingerprint)
					: executor.fingerprint(this.payload, "operation '" + this.name + "'",
							"Pass a payload the JSON mapper can write (what identifies the request, such as a record "
									+ "of its fields), or a fingerprint(...) of your own");
			return new Prepared(policy(resultType), key, recordKey, fingerprint);
		}

		private IdempotencyPolicy policy(Type resultType) {
			OperationDefaults defaults = IdempotencyTemplate.this.executor.operationDefaults();
			Duration lease = (this.lease != null) ? this.lease : defaults.lease();
			try {
				return new IdempotencyPolicy(this.name, (this.ttl != null) ? this.ttl : defaults.ttl(), lease,
						(this.waitFor != null) ? this.waitFor : defaults.waitFor(),
						(this.retryAfter != null) ? this.retryAfter : defaults.retryAfter(), this.cacheFor,
						IdempotencyTemplate.this.bindings.computeIfAbsent(resultType,
								(type) -> IdempotencyTemplate.this.codec.bind(ResolvableType.forType(type))),
						(this.maxDuration != null) ? this.maxDuration : defaults.maxDuration(lease), this.duplicates);
			}
			catch (IllegalArgumentException ex) {
				throw new IllegalArgumentException(
						"IdempotencyTemplate operation '" + this.name + "': " + ex.getMessage(), ex);
			}
		}

	}

	/** Apart, so that the template loads no Reactor class before a Mono call. */
	private static final class MonoCalls {

		/** {@code scopes}: {@code null} for a call that names its scope. */
		@SuppressWarnings("unchecked")
		static <T> Mono<T> execute(IdempotencyExecutor executor, @Nullable Function<ContextView, Mono<String>> scopes,
				Function<@Nullable String, Prepared> prepare, Supplier<? extends Mono<? extends T>> callback) {
			return (Mono<T>) Mono.deferContextual((contextView) -> {
				Mono<String> scope = (scopes != null) ? scopes.apply(contextView) : Mono.just("");
				return scope.flatMap((resolved) -> {
					Prepared call = prepare.apply((scopes != null) ? resolved : null);
					return IdempotencyExecutor.ReactiveCalls.execute(executor, call.policy(), call.key(),
							call.recordKey(), call.fingerprint(), () -> {
								Mono<? extends T> mono = callback.get();
								return (mono != null) ? mono : Mono.empty();
							}, contextView, null);
				});
			});
		}

	}

}
