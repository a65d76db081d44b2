package io.github.idempotent.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.idempotent.store.StoredResult;

/**
 * The winner's hold on a claimed key, ended once by {@link #completeAsync} or
 * {@link #releaseAsync}: never blocking a signalling thread, completed once the store has
 * answered, exceptionally only if a step itself broke; a blocking call awaits them.
 */
final class OwnerHandle implements IdempotencyExecutor.Hold {

	private static final Log logger = LogFactory.getLog(IdempotencyExecutor.class);

	// The status of a response that was never recorded: none releases the key.
	private static final int NO_STATUS = 0;

	private final IdempotencyProtocol protocol;

	private final LeaseWatchdog.Lease lease;

	private final ProtocolCall call;

	/** A blocking handle's next retry, run by {@link #settle} on the calling thread. */
	private @Nullable Retry pendingRetry;

	private volatile boolean announced;

	OwnerHandle(IdempotencyProtocol protocol, LeaseWatchdog.Lease lease) {
		this.protocol = protocol;
		this.lease = lease;
		this.call = lease.call;
	}

	/**
	 * Stores {@code result} for replay, or hands the hold to the caller that records the
	 * response once written (till then retries wait or get 409); a request already over
	 * (an async one that timed out) records nothing, but the key is kept. A store failure
	 * is logged, not thrown: the result belongs to the caller.
	 */
	CompletableFuture<Void> completeAsync(@Nullable Object result) {
		if (this.call.capture == null) {
			return completeWith(() -> StoredOutcome.value(this.call.policy, this.call.clientKey, result,
					this.protocol.maxResultSize, this.protocol.resultCompression));
		}
		returned();
		if (!this.call.capture.offer(this)) {
			end(NO_STATUS, null, "the request ended before its response was written", null);
		}
		return CompletableFuture.completedFuture(null);
	}

	private void returned() {
		if (!this.announced) {
			this.announced = true;
			this.call.observer.executed(this.call.policy, this.call.clientKey);
		}
	}

	@Override
	public CompletableFuture<Void> end(int status, @Nullable RecordedResponse response, @Nullable String unrecordable,
			@Nullable Throwable failed) {
		if (failed != null) {
			return releaseAsync(failed);
		}
		if (!this.call.policy.releaseOnStatus().contains(status)) {
			return completeWith(() -> {
				if (response != null) {
					return StoredOutcome.recorded(this.call.policy, this.call.clientKey, response,
							this.protocol.maxResultSize, this.protocol.resultCompression);
				}
				logger.error("The result of " + this.call.policy.name() + " for key '" + this.call.clientKey
						+ "' is not stored: " + unrecordable + ". Retries of the key are told that it completed "
						+ "and that its result is unavailable; the method is not run again for it");
				return StoredOutcome.notStored("response not recordable");
			});
		}
		if (logger.isDebugEnabled()) {
			logger.debug("Key '" + this.call.clientKey + "' of " + this.call.policy.name() + " is released: its "
					+ "response's status " + status + " is not final (releaseOnStatus "
					+ this.call.policy.releaseOnStatus() + "), so a retry runs the method again");
		}
		return settle(afterRenewal(() -> isFencedOut() ? releaseFencedOut() : delete(null)));
	}

	/** A renewal re-creates a vanished record, so the step must follow the last one. */
	private CompletableFuture<Void> afterRenewal(Supplier<CompletableFuture<Void>> step) {
		if (this.call.blocking) {
			this.protocol.leases.unwatch(this.lease);
			return step.get();
		}
		return this.protocol.leases.unwatchAsync(this.lease).thenCompose((renewed) -> step.get());
	}

	/** Stores the outcome the call returned, unless it is fenced out by then. */
	private CompletableFuture<Void> completeWith(Supplier<StoredResult> outcome) {
		returned();
		return settle(afterRenewal(() -> isFencedOut() ? keepKeyFencedOut(null) : store(outcome.get())));
	}

	/**
	 * Frees the key for a retry, or stores {@code failure} when {@code cacheFor} lists
	 * its type. A store failure is added to {@code failure} as suppressed, not thrown.
	 */
	CompletableFuture<Void> releaseAsync(Throwable failure) {
		return settle(afterRenewal(() -> {
			if (isFencedOut()) {
				return releaseFencedOut();
			}
			if (StoredOutcome.isStored(this.call.policy, this.call.clientKey, failure)) {
				return store(StoredOutcome.error(failure));
			}
			return delete(failure);
		}));
	}

	CompletableFuture<Void> abandonAsync(Throwable failure) {
		return settle(afterRenewal(() -> delete(failure)));
	}

	private CompletableFuture<Void> delete(@Nullable Throwable failure) {
		this.call.observer.step(this.call.policy, this.call.clientKey, IdempotencyObserver.Step.RELEASING);
		CompletableFuture<Void> done = new CompletableFuture<>();
		delete(failure, new StepConfirmation(this.lease), done);
		return done;
	}

	private void delete(@Nullable Throwable failure, StepConfirmation confirmation, CompletableFuture<Void> done) {
		this.protocol.store.release(this.call, this.lease.token).whenComplete((released, error) -> guarded(done, () -> {
			if (error == null) {
				if (!released && !confirmation.repeated()) {
					lostTo("release");
				}
				done.complete(null);
				return;
			}
			Throwable ex = Futures.unwrap(error);
			Runnable giveUp = () -> {
				if (failure != null) {
					failure.addSuppressed(ex);
				}
				logReleaseFailure(ex);
				done.complete(null);
			};
			long delay = confirmation.retryIn(ex);
			if (delay < 0) {
				giveUp.run();
				return;
			}
			logRetry("release", ex);
			later(delay, () -> delete(failure, confirmation, done), giveUp, done);
		}));
	}

	private CompletableFuture<Void> store(StoredResult result) {
		this.call.observer.step(this.call.policy, this.call.clientKey, IdempotencyObserver.Step.COMPLETING);
		CompletableFuture<Void> done = new CompletableFuture<>();
		store(result, new StepConfirmation(this.lease), done);
		return done;
	}

	private void store(StoredResult result, StepConfirmation confirmation, CompletableFuture<Void> done) {
		this.protocol.store.complete(this.call, this.lease.token, result)
			.whenComplete((completed, error) -> guarded(done, () -> {
				if (error == null) {
					if (!completed) {
						lostTo("complete");
					}
					done.complete(null);
					return;
				}
				Throwable ex = Futures.unwrap(error);
				long delay = confirmation.retryIn(ex);
				if (delay < 0) {
					if (StoreFailureClassifier.isUnavailable(ex) && !StoreFailureClassifier.isFull(ex)) {
						logCompleteFailure(ex);
						done.complete(null);
					}
					else {
						keepKey(ex).whenComplete((kept, never) -> done.complete(null));
					}
					return;
				}
				logRetry("completion", ex);
				this.protocol.leases.rewatch(this.lease);
				later(delay, () -> afterRenewal(() -> {
					if (isFencedOut()) {
						keepKeyFencedOut(ex).whenComplete((kept, never) -> done.complete(null));
					}
					else {
						store(result, confirmation, done);
					}
					return done;
				}), () -> {
					this.protocol.leases.unwatch(this.lease);
					logCompleteFailure(ex);
					done.complete(null);
				}, done);
			}));
	}

	/** Lost or past maxDuration: an outcome written now could land on a retry's. */
	private boolean isFencedOut() {
		return this.lease.lost || this.lease.overdue;
	}

	private CompletableFuture<Void> releaseFencedOut() {
		if (!this.lease.overdue) {
			return CompletableFuture.completedFuture(null);
		}
		logger.warn("Key '" + this.call.clientKey + "' of " + this.call.policy.name()
				+ ": the call failed after its maxDuration (" + this.call.policy.maxDuration()
				+ "); its key is released");
		return this.protocol.store.release(this.call, this.lease.token).handle((released, ex) -> {
			if (ex != null) {
				logReleaseFailure(ex);
			}
			return null;
		});
	}

	private CompletableFuture<Void> keepKeyFencedOut(@Nullable Throwable failure) {
		return this.lease.overdue ? keepKey(failure) : CompletableFuture.completedFuture(null);
	}

	private CompletableFuture<Void> keepKey(@Nullable Throwable failure) {
		String reason = (failure == null) ? "past max-duration"
				: StoreFailureClassifier.isFull(failure) ? "store full" : "store error";
		return this.protocol.store.complete(this.call, this.lease.token, StoredOutcome.notStored(reason))
			.handle((kept, ex) -> {
				logNotStored(reason, (ex != null) ? null : kept, (ex != null) ? Futures.unwrap(ex) : failure);
				return null;
			});
	}

	/** {@code kept}: {@code false} if taken over, {@code null} if writing failed. */
	private void logNotStored(String reason, @Nullable Boolean kept, @Nullable Throwable failure) {
		String notStored = "The result of " + this.call.policy.name() + " for key '" + this.call.clientKey
				+ "' was not stored (" + reason + ")";
		if (kept == null) {
			logger.error(notStored + ", nor that the call completed: its placeholder holds the key until its lease "
					+ "ends, then a retry may run the method again", failure);
		}
		else if (kept) {
			logger.error(notStored + "; its caller got it, and retries with this key get an error that says the call "
					+ "completed (result-unavailable), not a second run", failure);
		}
		else {
			logger.warn(notStored + ": the call ended after its maxDuration (" + this.call.policy.maxDuration()
					+ ") and its key was taken over meanwhile; its outcome went to its caller", failure);
		}
	}

	/**
	 * Runs {@code retry} after {@code delayMillis}: a blocking handle leaves it to
	 * {@link #settle}, which runs {@code giveUp} if interrupted. {@code done} completes
	 * even after shutdown: a caller may be waiting for it.
	 */
	private void later(long delayMillis, Runnable retry, Runnable giveUp, CompletableFuture<Void> done) {
		if (this.call.blocking) {
			this.pendingRetry = new Retry(delayMillis, retry, giveUp);
			return;
		}
		IdempotencyThreads threads = this.protocol.threads;
		try {
			threads.timer.schedule(() -> {
				try {
					threads.blockingStoreExecutor.execute(retry);
				}
				catch (RejectedExecutionException ex) {
					gaveUp(ex.getMessage(), done);
				}
			}, delayMillis, TimeUnit.MILLISECONDS);
		}
		catch (RejectedExecutionException ex) {
			gaveUp(ex.getMessage(), done);
		}
	}

	/** Runs a blocking handle's retries here, one after another rather than nested. */
	private CompletableFuture<Void> settle(CompletableFuture<Void> done) {
		Retry retry;
		while (this.call.blocking && (retry = this.pendingRetry) != null) {
			this.pendingRetry = null;
			if (IdempotencyThreads.sleep(retry.delayMillis())) {
				retry.step().run();
			}
			else {
				retry.giveUp().run();
			}
		}
		return done;
	}

	/** What a step's callback throws would be swallowed, leaving a caller waiting. */
	private static void guarded(CompletableFuture<Void> done, Runnable step) {
		try {
			step.run();
		}
		catch (Throwable ex) {
			done.completeExceptionally(ex);
		}
	}

	/** Waits for a blocking handle's step, whose own failure is thrown as it is. */
	static void await(CompletableFuture<Void> done) {
		try {
			done.join();
		}
		catch (CompletionException ex) {
			if (ex.getCause() instanceof RuntimeException runtime) {
				throw runtime;
			}
			if (ex.getCause() instanceof Error error) {
				throw error;
			}
			throw ex;
		}
	}

	private record Retry(long delayMillis, Runnable step, Runnable giveUp) {
	}

	private void gaveUp(@Nullable String why, CompletableFuture<Void> done) {
		this.protocol.leases.unwatchAsync(this.lease);
		logger.warn("Gave up confirming a step of key '" + this.call.clientKey + "' of " + this.call.policy.name()
				+ ": the application is shutting down (" + why + ")");
		done.complete(null);
	}

	private void logRetry(String step, Throwable ex) {
		logger.warn("Could not confirm the " + step + " of key '" + this.call.clientKey + "' of "
				+ this.call.policy.name()
				+ "; asking the store again (the step is fenced by the owner token, so repeating it is safe): " + ex);
	}

	/** The store refused {@code step}: another owner holds the key, or it is gone. */
	private void lostTo(String step) {
		if (!this.lease.lost) {
			this.lease.reportLost(step, this.lease.isHeld(System.nanoTime()));
		}
	}

	private void logCompleteFailure(Throwable ex) {
		logger.error("Could not confirm that the result of " + this.call.policy.name() + " for key '"
				+ this.call.clientKey + "' was stored" + unreachableFor(ex)
				+ ": if it was not, retries are refused as in progress until the lease expires "
				+ "and may then run the method again", ex);
	}

	private void logReleaseFailure(Throwable ex) {
		logger.error("Could not release key '" + this.call.clientKey + "' of " + this.call.policy.name()
				+ " after the method failed or answered a status that releases it" + unreachableFor(ex)
				+ "; retries are refused until its lease expires", ex);
	}

	private String unreachableFor(Throwable ex) {
		return StoreFailureClassifier.isUnavailable(ex)
				? " (the store stayed unreachable for " + this.call.policy.lease() + ")" : "";
	}

}
