package io.github.idempotent.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;
import org.springframework.util.ClassUtils;

import io.github.idempotent.observation.DefaultIdempotencyObservationConvention;
import io.github.idempotent.observation.IdempotencyObservationContext;
import io.github.idempotent.observation.IdempotencyObservationContext.Outcome;
import io.github.idempotent.observation.IdempotencyObservationConvention;
import io.github.idempotent.observation.IdempotencyObservationDocumentation;
import io.github.idempotent.observation.IdempotencyObservationDocumentation.Events;
import io.github.idempotent.store.IdempotencyStore;

/**
 * One {@link IdempotencyObservationDocumentation#IDEMPOTENT_CALL} observation per call;
 * the store's steps are its events, cheaper than child observations.
 */
final class CallObservations {

	/** Micrometer's {@code ObservationThreadLocalAccessor.KEY}. */
	static final String REACTOR_CONTEXT_KEY = "micrometer.observation";

	private final ObservationRegistry registry;

	private final String store;

	private final @Nullable IdempotencyObservationConvention customConvention;

	private final IdempotencyObservationConvention defaultConvention;

	CallObservations(ObservationRegistry registry, IdempotencyStore store,
			@Nullable IdempotencyObservationConvention customConvention, boolean includeKey) {
		Assert.notNull(registry, "registry must not be null");
		this.registry = registry;
		this.store = storeName(store);
		this.customConvention = customConvention;
		this.defaultConvention = new DefaultIdempotencyObservationConvention(includeKey);
	}

	/** A local cache is named after the store behind it. */
	private static String storeName(IdempotencyStore store) {
		Class<?> type = ClassUtils.getUserClass(store);
		// By name: CachingIdempotencyStore needs Caffeine, which may be absent.
		if (type.getName().equals("io.github.idempotent.store.cache.CachingIdempotencyStore")) {
			type = ClassUtils
				.getUserClass(((io.github.idempotent.store.cache.CachingIdempotencyStore) store).getDelegate());
		}
		return switch (type.getName()) {
			case "io.github.idempotent.store.redis.RedisIdempotencyStore" -> "redis";
			case "io.github.idempotent.store.jdbc.JdbcIdempotencyStore" -> "jdbc";
			case "io.github.idempotent.store.memory.InMemoryIdempotencyStore" -> "memory";
			default -> type.getSimpleName();
		};
	}

	/** {@code parent}: the caller's observation when no thread carries it (a Mono). */
	@Nullable Call start(IdempotencyPolicy policy, String clientKey, @Nullable Object parent) {
		if (this.registry.isNoop()) {
			return null;
		}
		IdempotencyObservationContext context = new IdempotencyObservationContext(policy.name(), this.store, clientKey);
		Observation observation = IdempotencyObservationDocumentation.IDEMPOTENT_CALL.observation(this.customConvention,
				this.defaultConvention, () -> context, this.registry);
		if (observation.isNoop()) {
			return null;
		}
		if (parent instanceof Observation parentObservation) {
			observation.parentObservation(parentObservation);
		}
		observation.start();
		return new Call(observation, context);
	}

	static void stop(@Nullable Call observed, @Nullable Throwable failure) {
		if (observed != null) {
			observed.stop(failure);
		}
	}

	/**
	 * The future {@code start} returns, completed once {@code observed} has stopped, so
	 * that whoever sees the outcome finds it recorded; cancelling it cancels that one.
	 */
	static CompletableFuture<@Nullable Object> observe(@Nullable Call observed,
			Supplier<CompletableFuture<@Nullable Object>> start) {
		CompletableFuture<@Nullable Object> result;
		try {
			result = start.get();
		}
		catch (RuntimeException | Error ex) {
			// Thrown before a future existed: the observation must not stay open.
			stop(observed, ex);
			throw ex;
		}
		if (observed == null) {
			return result;
		}
		CompletableFuture<@Nullable Object> observedResult = new CompletableFuture<>() {

			@Override
			public boolean cancel(boolean mayInterruptIfRunning) {
				result.cancel(mayInterruptIfRunning);
				return super.cancel(mayInterruptIfRunning);
			}

		};
		result.whenComplete((value, failure) -> {
			Throwable cause = (failure != null) ? Futures.unwrap(failure) : null;
			try {
				observed.stop(cause);
			}
			catch (Throwable handlerFailure) {
				// The caller's, as on the blocking path: swallowed, it would leave the
				// caller waiting for ever.
				observedResult.completeExceptionally(handlerFailure);
				return;
			}
			if (failure != null) {
				// As it failed: observing a call never changes what its caller gets.
				observedResult.completeExceptionally(failure);
			}
			else {
				observedResult.complete(value);
			}
		});
		return observedResult;
	}

	/** Called back from several threads: the renewal's, the future's completer. */
	static final class Call implements IdempotencyObserver {

		final Observation observation;

		private final IdempotencyObservationContext context;

		private final AtomicBoolean stopped = new AtomicBoolean();

		/** After the method has run, a failure is the method's, not the store's. */
		private volatile boolean ran;

		Call(Observation observation, IdempotencyObservationContext context) {
			this.observation = observation;
			this.context = context;
		}

		@Override
		public void executed(IdempotencyPolicy policy, String key) {
			outcome(Outcome.EXECUTED);
		}

		@Override
		public void replayed(IdempotencyPolicy policy, String key) {
			outcome(Outcome.REPLAYED);
		}

		@Override
		public void skipped(IdempotencyPolicy policy, String key) {
			outcome(Outcome.SKIPPED);
		}

		@Override
		public void flagged(IdempotencyPolicy policy, String key) {
			outcome(Outcome.FLAGGED);
		}

		@Override
		public void rejected(IdempotencyPolicy policy, String key, IdempotencyException reason) {
			outcome((reason instanceof IdempotencyInProgressException) ? Outcome.IN_PROGRESS
					: (reason instanceof IdempotencyStoreFullException) ? Outcome.STORE_FULL : Outcome.KEY_REUSED);
		}

		@Override
		public void bypassed(IdempotencyPolicy policy, String key, RuntimeException storeFailure) {
			outcome(Outcome.BYPASSED);
		}

		@Override
		public void leaseLost(IdempotencyPolicy policy, String key) {
			this.context.setOutcome(Outcome.LEASE_LOST);
		}

		private void outcome(Outcome outcome) {
			// A lease lost while the method ran (told by the renewal) stays the outcome.
			if (this.context.getOutcome() != Outcome.LEASE_LOST) {
				this.context.setOutcome(outcome);
			}
		}

		@Override
		public void step(IdempotencyPolicy policy, String key, Step step) {
			if (step != Step.CLAIMED) {
				this.ran = true;
			}
			this.observation.event(Events.valueOf(step.name()));
		}

		/** Calls after the first do nothing. */
		void stop(@Nullable Throwable failure) {
			if (!this.stopped.compareAndSet(false, true)) {
				return;
			}
			if (this.context.getOutcome() == null && failure != null) {
				this.context.setOutcome((!this.ran && failure instanceof IdempotencyStoreUnavailableException)
						? Outcome.STORE_UNAVAILABLE : Outcome.ERROR);
			}
			if (failure != null) {
				this.observation.error(failure);
			}
			this.observation.stop();
		}

	}

}
