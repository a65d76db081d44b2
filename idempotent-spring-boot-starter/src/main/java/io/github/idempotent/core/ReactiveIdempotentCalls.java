package io.github.idempotent.core;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import io.github.idempotent.core.IdempotentCallObservations.ObservedCall;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;

/**
 * Calls whose result is a {@code Mono}, for {@code @Idempotent} and
 * {@link IdempotencyTemplate} alike: the key is claimed without blocking (see
 * {@link IdempotencyExecutor#executeNonBlocking}), and the {@code Mono} is created and
 * subscribed only by the call that owns the key. Loaded only when Reactor is present.
 * <p>
 * Cancellation: the {@code Mono} is subscribed apart from the caller's subscription, with
 * the caller's context, so cancelling the caller's subscription does not cancel a call
 * that has started. It runs to completion and its outcome is stored; a retry gets it as a
 * replay, rather than running a second time after a first run that may have had its side
 * effects.
 */
public final class ReactiveIdempotentCalls {

	private ReactiveIdempotentCalls() {
	}

	/**
	 * Runs the {@code Mono} that {@code call} creates at most once per key.
	 * @param contextView the subscriber's context, which the call's {@code Mono} sees
	 * @param responseObserver an observer of the caller's own (a WebFlux response), or
	 * {@link IdempotencyObserver#NONE}
	 */
	public static Mono<?> execute(IdempotentCalls calls, IdempotencyPolicy policy, String clientKey, RecordKey key,
			Fingerprint fingerprint, Supplier<? extends Mono<?>> call, ContextView contextView,
			IdempotencyObserver responseObserver, @Nullable OutcomeRecorder recorder) {
		IdempotencyExecutor executor = calls.getExecutor();
		IdempotentCallObservations observations = calls.getCallObservations();
		ObservedCall observed = (observations != null) ? observations.start(policy, clientKey,
				contextView.getOrDefault(IdempotentCallObservations.REACTOR_CONTEXT_KEY, null)) : null;
		if (observed != null) {
			return observe(observed,
					(callObserver) -> executor.executeNonBlocking(policy, clientKey, key, fingerprint, () -> {
						try (IdempotentCallObservations.Scope scope = observed.openScope()) {
							// The call's Mono sees this call as its parent observation;
							// written inside the subscriber's context so that it wins
							// over the subscriber's own.
							return withIdempotencyContext(call.get())
								.contextWrite((methodContext) -> methodContext
									.put(IdempotentCallObservations.REACTOR_CONTEXT_KEY, observed.contextValue()))
								.contextWrite(contextView)
								.toFuture();
						}
					}, callObserver, recorder), responseObserver);
		}
		CompletableFuture<@Nullable Object> result = executor.executeNonBlocking(policy, clientKey, key, fingerprint,
				() -> withIdempotencyContext(call.get()).contextWrite(contextView).toFuture(), responseObserver,
				recorder);
		// suppressCancel: a cancelled subscriber leaves the call running (above).
		return Mono.fromFuture(result, true);
	}

	/**
	 * The observed call as a {@code Mono} whose subscriber sees the outcome only after
	 * the observation has stopped. A subscriber that cancels leaves the call running (see
	 * above): its observation stops when the call ends.
	 */
	private static Mono<?> observe(ObservedCall observed,
			Function<IdempotencyObserver, CompletableFuture<@Nullable Object>> execution,
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
			.doOnCancel(() -> result.whenComplete((value, failure) -> observed.stop(IdempotentCalls.unwrap(failure))));
	}

	/**
	 * The call's {@code Mono} with this call's {@link IdempotencyContext} in its Reactor
	 * context: the thread that runs the call's operators is rarely the one the context is
	 * bound to. Read while the executor has it bound, before the subscription.
	 */
	private static Mono<?> withIdempotencyContext(Mono<?> mono) {
		IdempotencyContext current = IdempotencyContext.current().orElse(null);
		return (current != null) ? mono
			.contextWrite((methodContext) -> methodContext.put(IdempotencyContext.REACTOR_CONTEXT_KEY, current)) : mono;
	}

}
