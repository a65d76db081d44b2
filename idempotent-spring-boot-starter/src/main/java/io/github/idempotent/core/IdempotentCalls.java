package io.github.idempotent.core;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;

import org.springframework.util.Assert;
import org.springframework.util.StringUtils;

import io.github.idempotent.observation.IdempotencyObservationConvention;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;

/**
 * The steps every guard takes before the {@link IdempotencyExecutor}: checks the key and
 * scope, scopes the key, fingerprints the payload and observes the call, so that
 * {@code @Idempotent}, the web layer and {@link IdempotencyTemplate} refuse the same keys
 * the same way.
 */
public final class IdempotentCalls {

	/**
	 * Longest scope: a principal name or a tenant id, never a payload.
	 */
	public static final int MAX_SCOPE_LENGTH = 1024;

	private final IdempotencyExecutor executor;

	private final Fingerprinter fingerprinter;

	private final String keyPrefix;

	private final int maxKeyLength;

	private volatile @Nullable CallObservations observations;

	public IdempotentCalls(IdempotencyExecutor executor, Fingerprinter fingerprinter, String keyPrefix,
			int maxKeyLength) {
		Assert.notNull(executor, "executor must not be null");
		Assert.notNull(fingerprinter, "fingerprinter must not be null");
		Assert.hasText(keyPrefix, "keyPrefix must not be empty");
		Assert.isTrue(maxKeyLength > 0, "maxKeyLength must be positive");
		this.executor = executor;
		this.fingerprinter = fingerprinter;
		this.keyPrefix = keyPrefix;
		this.maxKeyLength = maxKeyLength;
	}

	public IdempotencyExecutor getExecutor() {
		return this.executor;
	}

	public Fingerprinter fingerprinter() {
		return this.fingerprinter;
	}

	/**
	 * Observes each call in {@code registry}, as {@code idempotent.call}.
	 * @param convention a convention that replaces the default, or {@code null}
	 * @param includeKey whether the default convention puts the caller's key on spans
	 */
	public void observeWith(ObservationRegistry registry, @Nullable IdempotencyObservationConvention convention,
			boolean includeKey) {
		this.observations = new CallObservations(registry, this.executor.getStore(), convention, includeKey);
	}

	@Nullable CallObservations observations() {
		return this.observations;
	}

	/**
	 * Checks the caller's key of {@code operation}: not longer than
	 * {@code idempotent.max-key-length}, printable.
	 * @throws IdempotencyKeyException if it is not
	 */
	public void checkKey(String operation, String key) {
		validate(operation, "key", key, this.maxKeyLength, null);
	}

	/**
	 * Checks a key of {@code operation} that the application built, not one the caller
	 * sent as it is: a caller told to send a shorter key could do nothing about it.
	 * @param builder what built the key, for the log, for example {@code "its key
	 * expression"}
	 * @throws IdempotencyKeyException if it is too long or not printable
	 */
	public void checkApplicationKey(String operation, String key, String builder) {
		validate(operation, "key", key, this.maxKeyLength, builder);
	}

	/**
	 * The record key of a call: {@code {prefix}:{scope}:{name}:{key}}, hashed when longer
	 * than the store keeps. Checks the scope; the key must have passed {@link #checkKey}.
	 * @throws IdempotencyKeyException if the scope is too long or malformed
	 * @throws IdempotencyScopeException if the scope is blank
	 */
	public RecordKey recordKey(String operation, String scope, String key) {
		if (!StringUtils.hasText(scope)) {
			// Every caller the resolver does not know would share this one scope.
			throw new IdempotencyScopeException("The scope of " + operation + " is blank: the "
					+ "IdempotencyScopeResolver answered \"" + scope + "\". Return a scope for every caller, or throw "
					+ "IdempotencyScopeException for a caller it cannot tell; return IdempotencyScopeResolver.GLOBAL "
					+ "where callers are meant to share their keys");
		}
		validate(operation, "scope", scope, MAX_SCOPE_LENGTH, "its scope resolver or scope expression");
		return RecordKey.of(this.keyPrefix, scope, operation, key, this.executor.getStore().maxKeyLength());
	}

	/**
	 * The fingerprint of a call's payload; one the mapper cannot write is an
	 * {@link IdempotencyPayloadException}, which listeners do not redeliver.
	 * @param owner what the payload belongs to, for the message
	 * @param remedy what the application can do about it, for the message
	 */
	public Fingerprint fingerprint(@Nullable Object payload, String owner, String remedy) {
		try {
			return this.fingerprinter.fingerprint(payload);
		}
		catch (JacksonException ex) {
			throw new IdempotencyPayloadException(
					"Cannot fingerprint the payload of " + owner + ": " + ex.getOriginalMessage() + ". " + remedy, ex);
		}
	}

	/**
	 * {@link IdempotencyExecutor#execute}, observed when observations are set.
	 */
	public @Nullable Object execute(IdempotencyPolicy policy, String clientKey, RecordKey key, Fingerprint fingerprint,
			IdempotencyExecutor.Invocation invocation, IdempotencyObserver callObserver,
			@Nullable OutcomeRecorder recorder) throws Throwable {
		CallObservations observations = this.observations;
		CallObservations.Call observed = (observations != null) ? observations.start(policy, clientKey, null) : null;
		if (observed == null) {
			return this.executor.execute(policy, clientKey, key, fingerprint, invocation, callObserver, recorder);
		}
		Throwable failure = null;
		try (Observation.Scope scope = observed.openScope()) {
			return this.executor.execute(policy, clientKey, key, fingerprint, invocation, both(callObserver, observed),
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
	 * {@link IdempotencyExecutor#executeAsync}, observed when observations are set: the
	 * returned future completes once the observation has stopped.
	 */
	public CompletableFuture<@Nullable Object> executeAsync(IdempotencyPolicy policy, String clientKey, RecordKey key,
			Fingerprint fingerprint, IdempotencyExecutor.AsyncInvocation invocation, IdempotencyObserver callObserver,
			@Nullable OutcomeRecorder recorder) {
		CallObservations observations = this.observations;
		CallObservations.Call observed = (observations != null) ? observations.start(policy, clientKey, null) : null;
		if (observed == null) {
			return this.executor.executeAsync(policy, clientKey, key, fingerprint, invocation, callObserver, recorder);
		}
		CompletableFuture<@Nullable Object> result;
		try (Observation.Scope scope = observed.openScope()) {
			result = this.executor.executeAsync(policy, clientKey, key, fingerprint, invocation,
					both(callObserver, observed), recorder);
		}
		catch (Throwable ex) {
			observed.stop(ex);
			throw ex;
		}
		return stopOnCompletion(result, observed);
	}

	private static IdempotencyObserver both(IdempotencyObserver callObserver, IdempotencyObserver observed) {
		return (callObserver == IdempotencyObserver.NONE) ? observed
				: IdempotencyObserver.composite(List.of(callObserver, observed));
	}

	/**
	 * The caller's future, completed once the observation has stopped, so that whoever
	 * sees the outcome also finds it recorded. Cancelling it cancels the executor's
	 * future (which detaches the caller, see {@link IdempotencyExecutor#executeAsync}).
	 */
	private static CompletableFuture<@Nullable Object> stopOnCompletion(CompletableFuture<@Nullable Object> result,
			CallObservations.Call observed) {
		CompletableFuture<@Nullable Object> observedResult = new CompletableFuture<>() {

			@Override
			public boolean cancel(boolean mayInterruptIfRunning) {
				result.cancel(mayInterruptIfRunning);
				return super.cancel(mayInterruptIfRunning);
			}

		};
		result.whenComplete((value, failure) -> {
			Throwable cause = unwrap(failure);
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

	static @Nullable Throwable unwrap(@Nullable Throwable failure) {
		return (failure != null) ? Futures.unwrap(failure) : null;
	}

	/**
	 * Checks a key or scope before it reaches the store, so that a store never sees a
	 * value it cannot keep apart from another (Redis writes a lone surrogate as '?') and
	 * a malformed value is the caller's 400, not a store failure (which would be a 503,
	 * or an unprotected run under {@code failure-mode=open}). Validated values are also
	 * safe to log.
	 * @param operation the operation's name, for the log
	 * @param what {@code "key"} or {@code "scope"}
	 */
	public static void validate(String operation, String what, String value, int maxLength) {
		validate(operation, what, value, maxLength, null);
	}

	/**
	 * {@link #validate(String, String, String, int)} of a value that {@code builder}
	 * built.
	 * @param operation the operation's name, for the log
	 * @param what {@code "key"} or {@code "scope"}
	 * @param builder what in the application built the value, or {@code null} for a key
	 * the caller sent: only that caller is told to send a shorter one
	 */
	static void validate(String operation, String what, String value, int maxLength, @Nullable String builder) {
		if (value.length() > maxLength) {
			String tooLong = " is " + value.length() + " characters, longer than ";
			String limit = what.equals("key") ? " (idempotent.max-key-length)" : "";
			throw (builder != null)
					? new IdempotencyKeyException("Idempotency " + what + tooLong + "the " + maxLength + " allowed",
							"Idempotency " + what + " of " + operation + ", built by " + builder + "," + tooLong
									+ maxLength + limit + "; build a shorter one (a hash of it, say)")
					: new IdempotencyKeyException(
							"Idempotency " + what + tooLong + "the " + maxLength
									+ " allowed; send a shorter key, such as a UUID",
							"Idempotency " + what + " of " + operation + tooLong + maxLength + limit
									+ "; the caller is told to send a shorter key, such as a UUID");
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
						"Idempotency " + what + " of " + operation + " has a control character or "
								+ "a broken surrogate pair at position " + (i + 1));
			}
		}
	}

}
