package io.github.idempotent.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

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
 * Calls whose result is a {@code Mono}; loaded only with Reactor. Only the owner
 * subscribes the {@code Mono}, apart from the caller's subscription, so a cancelled
 * caller leaves a started call running.
 */
public final class ReactiveIdempotentCalls {

	private static final boolean nettyPresent = ClassUtils.isPresent("io.netty.util.internal.ThreadExecutorMap",
			ReactiveIdempotentCalls.class.getClassLoader());

	private ReactiveIdempotentCalls() {
	}

	/** Runs the {@code Mono} that {@code call} creates at most once per key. */
	public static Mono<?> execute(IdempotencyExecutor executor, IdempotencyPolicy policy, String clientKey,
			RecordKey key, Fingerprint fingerprint, Supplier<? extends Mono<?>> call, ContextView contextView,
			IdempotencyExecutor.@Nullable ResponseCapture capture) {
		CallObservations.Call observed = executor.startObservation(policy, clientKey,
				contextView.getOrDefault(CallObservations.REACTOR_CONTEXT_KEY, null));
		CompletableFuture<@Nullable Object> result;
		try {
			result = executor.executeNonBlocking(policy, clientKey, key, fingerprint, () -> {
				try (Observation.Scope scope = (observed != null) ? observed.observation.openScope() : null) {
					Mono<?> mono = withIdempotencyContext(call.get());
					// Written inside the subscriber's context, so that this observation,
					// not the subscriber's, is the Mono's parent.
					return ((observed != null) ? mono.contextWrite((methodContext) -> methodContext
						.put(CallObservations.REACTOR_CONTEXT_KEY, observed.observation)) : mono)
						.contextWrite(contextView)
						.toFuture();
				}
			}, observed, capture, subscriberThread());
		}
		catch (RuntimeException | Error ex) {
			// Thrown before a future existed: the observation must not stay open.
			CallObservations.stop(observed, ex);
			return Mono.error(ex);
		}
		// suppressCancel: a cancelled subscriber leaves the call running.
		return Mono.fromFuture(CallObservations.stopOnCompletion(result, observed), true);
	}

	/** Read while the executor has it bound: the operators run on other threads. */
	private static Mono<?> withIdempotencyContext(Mono<?> mono) {
		IdempotencyContext current = IdempotencyContext.current().orElse(null);
		return (current != null) ? mono
			.contextWrite((methodContext) -> methodContext.put(IdempotencyContext.REACTOR_CONTEXT_KEY, current)) : mono;
	}

	/** {@code reply}, signalled on {@code resume} rather than the client's I/O thread. */
	public static <T> CompletableFuture<T> resumeOn(CompletableFuture<T> reply, Executor resume) {
		return reply.isDone() ? reply : reply.whenCompleteAsync((value, failure) -> {
		}, resume);
	}

	/** Where work continues after a store's reply: this event loop, else a scheduler. */
	public static Executor subscriberThread() {
		Executor eventLoop = nettyPresent ? NettyEventLoops.current() : null;
		if (eventLoop != null) {
			// Shutting down with the server: a thread that may block finishes.
			return Futures.orElse(eventLoop, on(Schedulers.boundedElastic()));
		}
		return on(Schedulers.isInNonBlockingThread() ? Schedulers.parallel() : Schedulers.boundedElastic());
	}

	/** Disposed with the application, the call ends where its reply arrived. */
	private static Executor on(Scheduler scheduler) {
		return Futures.orElse(scheduler::schedule, Runnable::run);
	}

	/** Apart, so that Netty is loaded only when present. */
	private static final class NettyEventLoops {

		static @Nullable Executor current() {
			return ThreadExecutorMap.currentExecutor();
		}

	}

}
