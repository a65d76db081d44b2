package io.github.idempotent.core;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import io.github.idempotent.store.ClaimResult;

/**
 * The protocol for a method whose result is a {@link CompletionStage} (a reactive type is
 * adapted to one): the hold ends on the stage's completion; a duplicate in progress is
 * awaited on the timer. Each store reply is handed off first: a blocking call on the
 * client's I/O thread (Lettuce's event loop) would wait for a reply only it can read.
 */
final class CompletionStageCall {

	private final IdempotencyProtocol protocol;

	private final ProtocolCall call;

	private final IdempotencyExecutor.AsyncInvocation invocation;

	private final Executor handoff;

	private final CompletableFuture<@Nullable Object> result = new CompletableFuture<>();

	CompletionStageCall(IdempotencyProtocol protocol, ProtocolCall call, IdempotencyExecutor.AsyncInvocation invocation,
			Executor handoff) {
		this.protocol = protocol;
		this.call = call;
		this.invocation = invocation;
		// Refused at shutdown: a thread of its own completes the caller's future, never
		// the store client's I/O thread that delivered the reply.
		this.handoff = Futures.orElse(handoff,
				(task) -> IdempotencyThreads.daemons(() -> "idempotent-shutdown").newThread(task).start());
	}

	/** Claims on the calling thread, so the method runs with its thread-bound context. */
	CompletableFuture<@Nullable Object> start() {
		try {
			// handle() throws nothing: only the claim's failure is caught here.
			handle(this.protocol.store.claim(this.call));
		}
		catch (RuntimeException ex) {
			firstClaimFailed(ex);
		}
		return this.result;
	}

	/** Claims without blocking the calling thread (an event loop). */
	CompletableFuture<@Nullable Object> startNonBlocking() {
		whenAnswered(this.protocol.store.claimAsync(this.call), true, (claim, failure) -> {
			if (failure != null) {
				firstClaimFailed(Futures.unwrap(failure));
			}
			else {
				handle(claim);
			}
		});
		return this.result;
	}

	private void firstClaimFailed(Throwable ex) {
		Throwable refusal = this.protocol.firstClaimFailed(this.call, ex);
		if (refusal != null) {
			this.result.completeExceptionally(refusal);
			return;
		}
		proceed(null, IdempotencyContext::unbind);
	}

	private void handle(ClaimResult claim) {
		try {
			ClaimDecision decision = this.protocol.decide(this.call, claim);
			if (decision instanceof ClaimDecision.Run run) {
				proceed(run.owner(), () -> this.protocol.bindOwner(this.call, run.acquired()));
			}
			else if (decision instanceof ClaimDecision.Answer answer) {
				this.result.complete(answer.value());
			}
			else if (decision instanceof ClaimDecision.RunAsDuplicate duplicate) {
				proceed(null, () -> IdempotencyContext.bind(duplicate.context()));
			}
			else {
				waitAndReclaim(((ClaimDecision.Wait) decision).millis());
			}
		}
		catch (Throwable ex) {
			this.result.completeExceptionally(ex);
		}
	}

	private void waitAndReclaim(long millis) {
		if (this.protocol.threads.stopping) {
			shuttingDown();
			return;
		}
		try {
			this.protocol.threads.timer.schedule(this::reclaim, millis, TimeUnit.MILLISECONDS);
		}
		catch (RejectedExecutionException ex) {
			shuttingDown();
		}
	}

	/** A duplicate still waiting at shutdown is refused, never left waiting. */
	private void shuttingDown() {
		this.result.completeExceptionally(this.protocol.shuttingDown(this.call));
	}

	private void reclaim() {
		if (this.result.isDone()) {
			return;
		}
		if (this.protocol.threads.stopping) {
			shuttingDown();
			return;
		}
		// Never inline: this is the timer's thread.
		whenAnswered(this.protocol.store.claimAsync(this.call), false, (claim, failure) -> {
			if (failure == null) {
				handle(claim);
			}
			else {
				this.result.completeExceptionally(this.protocol.claimFailed(this.call, Futures.unwrap(failure)));
			}
		});
	}

	/** Runs {@code action} on {@link #handoff}, or inline if asked and answered. */
	private <T> void whenAnswered(CompletableFuture<T> reply, boolean inline,
			BiConsumer<? super T, ? super Throwable> action) {
		if (inline && reply.isDone()) {
			reply.whenComplete(action);
		}
		else {
			reply.whenCompleteAsync(action, this.handoff);
		}
	}

	/**
	 * Runs the method in the context {@code bind} binds: as {@code owner}, or unguarded
	 * or as a duplicate without one.
	 */
	private void proceed(@Nullable OwnerHandle owner, Supplier<IdempotencyContext.Scope> bind) {
		if (owner != null && this.result.isDone()) {
			// The caller went away before the method started: a retry may run it.
			owner.abandonAsync(new CancellationException());
			return;
		}
		CompletionStage<?> stage;
		try (IdempotencyContext.Scope scope = bind.get()) {
			stage = this.invocation.proceed();
			if (stage == null) {
				throw new IllegalStateException(this.call.policy.name()
						+ " returned null instead of a future or Mono; return a completed one for a null result");
			}
		}
		catch (Throwable ex) {
			ended(owner, null, ex);
			return;
		}
		stage.whenComplete((value, failure) -> ended(owner, value, (failure != null) ? Futures.unwrap(failure) : null));
	}

	/**
	 * Completes the caller's future once an owner's outcome is stored, so that a client
	 * that retries as soon as it has the answer gets a replay, not a 409.
	 */
	private void ended(@Nullable OwnerHandle owner, @Nullable Object value, @Nullable Throwable failure) {
		CompletableFuture<Void> stored = (owner == null) ? CompletableFuture.completedFuture(null)
				: (failure == null) ? owner.completeAsync(value) : owner.releaseAsync(failure);
		whenAnswered(stored, true, (done, never) -> {
			if (failure == null) {
				this.result.complete(value);
			}
			else {
				this.result.completeExceptionally(failure);
			}
		});
	}

}
