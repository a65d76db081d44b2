package io.github.idempotent.core;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;
import java.util.function.Supplier;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.ContextView;

import org.springframework.util.ClassUtils;

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
 * <p>
 * Threads: the call runs where it would have run without {@code @Idempotent}. The store's
 * reply arrives on the store client's I/O thread (Lettuce's event loop), which also reads
 * every other reply, the application's own included; the call is handed back to the
 * thread it was subscribed on when that thread is an event loop (the server's,
 * WebClient's), to Reactor's parallel scheduler from another non-blocking thread, and to
 * the bounded elastic scheduler from a thread that may block (a caller that blocks for
 * the result). The subscriber sees the outcome there too.
 */
public final class ReactiveIdempotentCalls {

	/**
	 * Key of the Reactor context of a subscriber that blocks its own thread until the
	 * call's result arrives: the call continues on a thread that may block instead.
	 */
	public static final String CALLER_WAITS = ReactiveIdempotentCalls.class.getName() + ".CALLER_WAITS";

	private static final boolean nettyPresent = ClassUtils.isPresent("io.netty.util.internal.ThreadExecutorMap",
			ReactiveIdempotentCalls.class.getClassLoader());

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
		// A subscriber that waits for the result on its own thread (a plain value of a
		// WebFlux handler) must not be handed its continuation: it would wait for itself.
		Executor subscriberThread = contextView.hasKey(CALLER_WAITS) ? on(Schedulers.boundedElastic())
				: subscriberThread();
		CallObservations observations = calls.observations();
		CallObservations.Call observed = (observations != null) ? observations.start(policy, clientKey,
				contextView.getOrDefault(CallObservations.REACTOR_CONTEXT_KEY, null)) : null;
		if (observed != null) {
			return observe(observed,
					(callObserver) -> executor.executeNonBlocking(policy, clientKey, key, fingerprint, () -> {
						try (Observation.Scope scope = observed.openScope()) {
							// The call's Mono sees this call as its parent observation;
							// written inside the subscriber's context so that it wins
							// over the subscriber's own.
							return withIdempotencyContext(call.get())
								.contextWrite((methodContext) -> methodContext.put(CallObservations.REACTOR_CONTEXT_KEY,
										observed.observation()))
								.contextWrite(contextView)
								.toFuture();
						}
					}, callObserver, recorder, subscriberThread), responseObserver);
		}
		CompletableFuture<@Nullable Object> result = executor.executeNonBlocking(policy, clientKey, key, fingerprint,
				() -> withIdempotencyContext(call.get()).contextWrite(contextView).toFuture(), responseObserver,
				recorder, subscriberThread);
		// suppressCancel: a cancelled subscriber leaves the call running (above).
		return Mono.fromFuture(result, true);
	}

	/**
	 * The observed call as a {@code Mono} whose subscriber sees the outcome only after
	 * the observation has stopped. A subscriber that cancels leaves the call running (see
	 * above): its observation stops when the call ends.
	 */
	private static Mono<?> observe(CallObservations.Call observed,
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

	/**
	 * {@code reply}, signalled on {@code resume} unless it is already there: what follows
	 * a store's reply (the rest of a response's writing, its commit actions) must not run
	 * on the client's I/O thread that delivered it (see above).
	 * @param resume from {@link #subscriberThread()}, taken where the work began
	 */
	public static <T> CompletableFuture<T> resumeOn(CompletableFuture<T> reply, Executor resume) {
		return reply.isDone() ? reply : reply.whenCompleteAsync((value, failure) -> {
		}, resume);
	}

	/**
	 * Where work begun on the current thread continues after a store's reply: this event
	 * loop if it is a Netty one, else a Reactor scheduler whose threads may block as much
	 * as the current one may.
	 */
	public static Executor subscriberThread() {
		Executor eventLoop = nettyPresent ? NettyEventLoops.current(on(Schedulers.boundedElastic())) : null;
		if (eventLoop != null) {
			return eventLoop;
		}
		return on(Schedulers.isInNonBlockingThread() ? Schedulers.parallel() : Schedulers.boundedElastic());
	}

	private static Executor on(Scheduler scheduler) {
		return (task) -> {
			try {
				scheduler.schedule(task);
			}
			catch (RejectedExecutionException ex) {
				// Disposed with the application: the call ends where its reply arrived.
				task.run();
			}
		};
	}

	/**
	 * Netty's event loops, apart so that Netty is loaded only when present.
	 */
	private static final class NettyEventLoops {

		/**
		 * The current thread's event loop, or {@code null} if it is not one; tasks it
		 * refuses go to {@code shutdown}.
		 */
		static @Nullable Executor current(Executor shutdown) {
			EventExecutor eventLoop = ThreadExecutorMap.currentExecutor();
			if (eventLoop == null) {
				return null;
			}
			return (task) -> {
				try {
					eventLoop.execute(task);
				}
				catch (RejectedExecutionException ex) {
					// The event loop is shutting down with the server: a thread that may
					// block finishes the call.
					shutdown.execute(task);
				}
			};
		}

	}

}
