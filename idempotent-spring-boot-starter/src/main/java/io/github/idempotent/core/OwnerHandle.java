package io.github.idempotent.core;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.idempotent.store.StoredResult;

/**
 * The winner's hold on a claimed key, in the shape of ShedLock's {@code SimpleLock}: it
 * carries the key, the owner token and fingerprint, and the lease renewal registered for
 * the call, and ends the hold exactly once with {@link #complete} or {@link #release}.
 * The synchronous path calls them in a {@code try}; futures and reactive types call them
 * from their completion signals, so the protocol is written once.
 */
public final class OwnerHandle {

	private static final Log logger = LogFactory.getLog(IdempotencyExecutor.class);

	private final IdempotencyProtocol protocol;

	private final IdempotencyPolicy policy;

	private final String clientKey;

	private final RecordKey key;

	private final LeaseWatchdog.Lease lease;

	private final IdempotencyObserver observer;

	/**
	 * Whether the call returned on the calling thread, whose steps then run there too (a
	 * JDBC store may write the result in the caller's transaction), retried after a
	 * sleep; else they run without blocking the thread that signals the completion.
	 */
	private final boolean blocking;

	/**
	 * Whether the observers have heard that the method ran: at its return, when its
	 * outcome is recorded later.
	 */
	private volatile boolean announced;

	OwnerHandle(IdempotencyProtocol protocol, IdempotencyPolicy policy, String clientKey, RecordKey key,
			LeaseWatchdog.Lease lease, IdempotencyObserver observer, boolean blocking) {
		this.protocol = protocol;
		this.blocking = blocking;
		this.observer = observer;
		this.policy = policy;
		this.clientKey = clientKey;
		this.key = key;
		this.lease = lease;
	}

	public RecordKey key() {
		return this.key;
	}

	public String token() {
		return this.lease.token();
	}

	public Fingerprint fingerprint() {
		return this.lease.fingerprint();
	}

	/**
	 * Stops the lease renewal and stores {@code result} for replay. A store that cannot
	 * be reached is asked again, the lease renewed meanwhile, until it confirms or
	 * {@link #confirmWithin() the bound} has passed; then the failure is logged, not
	 * thrown: the method has run and its result belongs to the caller. A result that
	 * cannot be stored never frees the key ({@link #keepKey}).
	 */
	public void complete(@Nullable Object result) {
		completeAsync(result).join();
	}

	/**
	 * Tells the observers that the method ran, while the caller's context is still bound
	 * (the response they mark), for an outcome that is stored later by an
	 * {@link OutcomeRecorder}. The lease is renewed until then.
	 */
	void returned() {
		announce();
	}

	private void announce() {
		if (!this.announced) {
			this.announced = true;
			this.observer.executed(this.policy, this.clientKey);
		}
	}

	/**
	 * {@link #complete} with the response the caller was sent, as an
	 * {@link OutcomeRecorder} recorded it: stored as written, replayed without decoding;
	 * or, when its status is not final ({@link #releases}), the key released.
	 */
	public void completeRecorded(RecordedResponse response) {
		completeRecordedAsync(response).join();
	}

	/**
	 * {@link #completeRecorded} without blocking the calling thread (an event loop). The
	 * returned stage completes, never exceptionally, once the store has answered.
	 */
	public CompletableFuture<Void> completeRecordedAsync(RecordedResponse response) {
		announce();
		boolean released = releases(response.status());
		return afterRenewal(() -> {
			if (isFencedOut()) {
				return released ? releaseFencedOut() : keepKeyFencedOut(null);
			}
			if (released) {
				return delete(null);
			}
			StoredResult stored = recorded(response);
			this.observer.step(this.policy, this.clientKey, IdempotencyObserver.Step.COMPLETING);
			return store(stored);
		});
	}

	/**
	 * Ends the hold of a call that ran but whose outcome cannot be stored as it was sent
	 * (an HTTP response streamed, too large, or broken while it was written): a record
	 * that says so is stored in its place, so that a retry is told the call completed and
	 * its result is unavailable, rather than running it again or replaying nothing. A
	 * status that is not final ({@link #releases}) releases the key instead, as a
	 * recorded one would.
	 * @param status the status the caller was sent
	 * @param why what kept the outcome from being stored, for the log
	 */
	public CompletableFuture<Void> completeNotStoredAsync(int status, String why) {
		announce();
		boolean released = releases(status);
		return afterRenewal(() -> {
			if (isFencedOut()) {
				return released ? releaseFencedOut() : keepKeyFencedOut(null);
			}
			if (released) {
				return delete(null);
			}
			logger.error("The result of " + this.policy.name() + " for key '" + this.clientKey + "' is not stored: "
					+ why + ". Retries of the key are told that it completed and that its result is unavailable; "
					+ "the method is not run again for it");
			this.observer.step(this.policy, this.clientKey, IdempotencyObserver.Step.COMPLETING);
			return store(StoredOutcome.notStored("response not recordable"));
		});
	}

	/**
	 * Stops the lease renewal, then takes {@code step}: a renewal re-creates a record
	 * that has vanished, so the step must follow it. A non-blocking call does not wait
	 * for a renewal in flight: the step runs at once, or on the thread that ends it.
	 */
	private CompletableFuture<Void> afterRenewal(Supplier<CompletableFuture<Void>> step) {
		if (this.blocking) {
			this.protocol.leases().unwatch(this.lease);
			return step.get();
		}
		return this.protocol.leases().unwatchAsync(this.lease).thenCompose((renewed) -> step.get());
	}

	private CompletableFuture<Boolean> sendCompletion(StoredResult result) {
		StoreAccess store = this.protocol.store();
		return this.blocking
				? Futures.call(() -> CompletableFuture
					.completedFuture(store.complete(this.key, token(), fingerprint(), result, this.policy.ttl())))
				: store.completeAsync(this.key, token(), fingerprint(), result, this.policy.ttl());
	}

	private CompletableFuture<Boolean> sendRelease() {
		StoreAccess store = this.protocol.store();
		return this.blocking ? Futures.call(() -> CompletableFuture.completedFuture(store.release(this.key, token())))
				: store.releaseAsync(this.key, token());
	}

	/**
	 * Whether the response's status is one its operation does not keep
	 * ({@code releaseOnStatus}): its key is then released, as after a failure, and
	 * nothing is stored, so a retry runs the method again. The one place where a returned
	 * response is told from a final one.
	 */
	private boolean releases(int status) {
		if (!this.policy.releaseOnStatus().contains(status)) {
			return false;
		}
		if (logger.isDebugEnabled()) {
			logger.debug("Key '" + this.clientKey + "' of " + this.policy.name() + " is released: its response's "
					+ "status " + status + " is not final (releaseOnStatus " + this.policy.releaseOnStatus()
					+ "), so a retry runs the method again");
		}
		return true;
	}

	private StoredResult recorded(RecordedResponse response) {
		return StoredOutcome.recorded(this.policy, this.clientKey, response, this.protocol.maxResultSize(),
				this.protocol.resultCompression());
	}

	/**
	 * Stops the lease renewal and deletes the placeholder so that a retry runs the
	 * method, or, when {@code cacheFor} lists {@code failure}'s type, stores it so that
	 * retries get the same error. A store that cannot be reached is asked again until
	 * {@link #confirmWithin() the bound}; a failure left is added to {@code failure} as
	 * suppressed.
	 */
	public void release(Throwable failure) {
		releaseAsync(failure).join();
	}

	/**
	 * {@link #complete} for a result that arrived on a completion signal: the store is
	 * written without blocking the signalling thread. The returned stage completes, never
	 * exceptionally, once the store has answered.
	 */
	public CompletableFuture<Void> completeAsync(@Nullable Object result) {
		announce();
		return afterRenewal(() -> {
			if (isFencedOut()) {
				return keepKeyFencedOut(null);
			}
			StoredResult encoded = encode(result);
			this.observer.step(this.policy, this.clientKey, IdempotencyObserver.Step.COMPLETING);
			return store(encoded);
		});
	}

	/**
	 * {@link #release} for a failure that arrived on a completion signal, without
	 * blocking the signalling thread. The returned stage completes, never exceptionally,
	 * once the store has answered.
	 */
	public CompletableFuture<Void> releaseAsync(Throwable failure) {
		return afterRenewal(() -> {
			if (isFencedOut()) {
				return releaseFencedOut();
			}
			if (StoredOutcome.isStored(this.policy, this.clientKey, failure)) {
				this.observer.step(this.policy, this.clientKey, IdempotencyObserver.Step.COMPLETING);
				return store(StoredOutcome.error(failure));
			}
			return delete(failure);
		});
	}

	/**
	 * Deletes the placeholder whatever the failure: for a caller that went away before
	 * the method started, when nothing ran that could be stored.
	 */
	CompletableFuture<Void> abandonAsync(Throwable failure) {
		return afterRenewal(() -> delete(failure));
	}

	private CompletableFuture<Void> delete(@Nullable Throwable failure) {
		this.observer.step(this.policy, this.clientKey, IdempotencyObserver.Step.RELEASING);
		CompletableFuture<Void> done = new CompletableFuture<>();
		delete(failure, new StepConfirmation(this.lease, confirmWithin()), done);
		return done;
	}

	private void delete(@Nullable Throwable failure, StepConfirmation confirmation, CompletableFuture<Void> done) {
		sendRelease().whenComplete((released, error) -> {
			if (error == null) {
				if (!released && !confirmation.repeated()) {
					releasedByOther();
				}
				done.complete(null);
				return;
			}
			Throwable ex = Futures.unwrap(error);
			long delay = confirmation.retryIn(ex);
			if (delay < 0) {
				suppress(failure, ex);
				logReleaseFailure(ex);
				done.complete(null);
				return;
			}
			logRetry("release", ex);
			later(delay, () -> delete(failure, confirmation, done), done);
		});
	}

	private static void suppress(@Nullable Throwable failure, Throwable ex) {
		if (failure != null) {
			failure.addSuppressed(ex);
		}
	}

	private CompletableFuture<Void> store(StoredResult result) {
		CompletableFuture<Void> done = new CompletableFuture<>();
		store(result, new StepConfirmation(this.lease, confirmWithin()), done);
		return done;
	}

	private void store(StoredResult result, StepConfirmation confirmation, CompletableFuture<Void> done) {
		sendCompletion(result).whenComplete((completed, error) -> {
			if (error == null) {
				if (!completed) {
					completedByOther();
				}
				done.complete(null);
				return;
			}
			Throwable ex = Futures.unwrap(error);
			long delay = confirmation.retryIn(ex);
			if (delay < 0) {
				if (isUnreachable(ex)) {
					logCompleteFailure(ex);
					done.complete(null);
				}
				else {
					keepKey(ex).whenComplete((kept, never) -> done.complete(null));
				}
				return;
			}
			logRetry("completion", ex);
			this.protocol.leases().rewatch(this.lease);
			later(delay, () -> afterRenewal(() -> {
				if (isFencedOut()) {
					// A renewal between the attempts found a tombstone, or the call
					// ran past its maxDuration: the result is never written then.
					keepKeyFencedOut(ex).whenComplete((kept, never) -> done.complete(null));
				}
				else {
					store(result, confirmation, done);
				}
				return done;
			}), done);
		});
	}

	/**
	 * Whether the watchdog has stopped renewing this call's lease: a renewal found the
	 * key taken (deleted by an operator, or taken over), or the call outlived its
	 * {@code maxDuration}. Its outcome is then never written: a completion would write a
	 * record that vanished anew, under the key a retry may be about to claim or, past
	 * maxDuration, is entitled to.
	 */
	private boolean isFencedOut() {
		return this.lease.isLost() || this.lease.isOverdue();
	}

	private CompletableFuture<Void> releaseFencedOut() {
		if (!this.lease.isOverdue()) {
			return CompletableFuture.completedFuture(null);
		}
		logNotStored();
		return sendRelease().handle((released, ex) -> {
			if (ex != null) {
				logReleaseFailure(ex);
			}
			return null;
		});
	}

	private void logNotStored() {
		logger.warn("Key '" + this.clientKey + "' of " + this.policy.name()
				+ ": the call failed after its maxDuration (" + this.policy.maxDuration() + "); its key is released");
	}

	private CompletableFuture<Void> keepKeyFencedOut(@Nullable Throwable failure) {
		return this.lease.isOverdue() ? keepKey(failure) : CompletableFuture.completedFuture(null);
	}

	private CompletableFuture<Void> keepKey(@Nullable Throwable failure) {
		String reason = notStoredReason(failure);
		return sendCompletion(StoredOutcome.notStored(reason)).handle((kept, ex) -> {
			logNotStored(reason, (ex != null) ? null : kept, (ex != null) ? Futures.unwrap(ex) : failure);
			return null;
		});
	}

	/**
	 * Why a result is not stored, in a few words: the record that says so must be small.
	 */
	private static String notStoredReason(@Nullable Throwable failure) {
		return (failure == null) ? "past max-duration"
				: StoreFailureClassifier.isFull(failure) ? "store full" : "store error";
	}

	/**
	 * @param kept whether the record that the call completed was written, {@code false}
	 * when the key was taken over, {@code null} when writing it failed
	 */
	private void logNotStored(String reason, @Nullable Boolean kept, @Nullable Throwable failure) {
		String notStored = "The result of " + this.policy.name() + " for key '" + this.clientKey + "' was not stored ("
				+ reason + ")";
		if (kept == null) {
			logger.error(notStored + ", nor that the call completed: its placeholder holds the key until its lease "
					+ "ends, then a retry may run the method again", failure);
		}
		else if (kept) {
			logger.error(notStored + "; its caller got it, and retries with this key get an error that says the call "
					+ "completed (result-unavailable), not a second run", failure);
		}
		else {
			logger.warn(notStored + ": the call ended after its maxDuration (" + this.policy.maxDuration()
					+ ") and its key was taken over meanwhile; its outcome went to its caller", failure);
		}
	}

	/**
	 * Whether {@code ex} says the store cannot be reached at all, rather than that it
	 * answered with a refusal: nothing can be written to it then.
	 */
	private static boolean isUnreachable(Throwable ex) {
		return StoreFailureClassifier.isUnavailable(ex) && !StoreFailureClassifier.isFull(ex);
	}

	/**
	 * Runs {@code retry} after {@code delayMillis}: on the calling thread after a sleep
	 * for a blocking call, else on the blocking-store threads (a store without
	 * asynchronous calls is called there), which the timer only hands it to. Once the
	 * application shuts down nothing retries, and {@code done} completes instead of
	 * never: a caller may be waiting for it.
	 */
	private void later(long delayMillis, Runnable retry, CompletableFuture<Void> done) {
		if (this.blocking) {
			if (IdempotencyThreads.sleep(delayMillis)) {
				retry.run();
			}
			else {
				gaveUp("interrupted", done);
			}
			return;
		}
		IdempotencyThreads threads = this.protocol.threads();
		try {
			threads.timer().schedule(() -> {
				try {
					threads.blockingStoreExecutor().execute(retry);
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

	private void gaveUp(@Nullable String why, CompletableFuture<Void> done) {
		this.protocol.leases().unwatchAsync(this.lease);
		logger.warn("Gave up confirming a step of key '" + this.clientKey + "' of " + this.policy.name()
				+ ": the application is shutting down (" + why + ")");
		done.complete(null);
	}

	StoredResult encode(@Nullable Object result) {
		return StoredOutcome.value(this.policy, this.clientKey, result, this.protocol.maxResultSize(),
				this.protocol.resultCompression());
	}

	/**
	 * How long a completion or release whose outcome is unknown is asked again: one lease
	 * from the first failure. Both steps are fenced by the owner token, so sending one
	 * again is safe whatever the first did: a completion that did land finds its own
	 * record completed under its token and answers {@code true}, a release that did land
	 * finds nothing and answers {@code true}; neither can undo another owner's record,
	 * since a take-over writes another token. Past one lease the store has also refused
	 * every renewal for a whole lease, so the placeholder may have lapsed and been taken
	 * over; the caller, who is waiting for this answer, is not held longer, unless the
	 * store still renews the lease (see {@link StepConfirmation}).
	 */
	Duration confirmWithin() {
		return this.policy.lease();
	}

	private void logRetry(String step, Throwable ex) {
		logger.warn("Could not confirm the " + step + " of key '" + this.clientKey + "' of " + this.policy.name()
				+ "; asking the store again (the step is fenced by the owner token, so repeating it is safe): " + ex);
	}

	void completedByOther() {
		if (!this.lease.isLost()) {
			this.protocol.leaseLoss()
				.leaseLost(this.policy, this.clientKey, "complete", this.lease.isHeld(System.nanoTime()),
						this.observer);
		}
	}

	void releasedByOther() {
		if (!this.lease.isLost()) {
			this.protocol.leaseLoss()
				.leaseLost(this.policy, this.clientKey, "release", this.lease.isHeld(System.nanoTime()), this.observer);
		}
	}

	void logCompleteFailure(Throwable ex) {
		// The method has run: its result goes back to this caller. The store may have
		// stored it all the same (only the answer was lost): then retries get it
		// replayed. If not, they see the placeholder until the lease expires, then may
		// run the method again.
		logger.error("Could not confirm that the result of " + this.policy.name() + " for key '" + this.clientKey
				+ "' was stored" + unreachableFor(ex)
				+ ": if it was not, retries are refused as in progress until the lease expires "
				+ "and may then run the method again", ex);
	}

	void logReleaseFailure(Throwable ex) {
		logger.error("Could not release key '" + this.clientKey + "' of " + this.policy.name()
				+ " after the method failed or answered a status that releases it" + unreachableFor(ex)
				+ "; retries are refused until its lease expires", ex);
	}

	private String unreachableFor(Throwable ex) {
		return StoreFailureClassifier.isUnavailable(ex) ? " (the store stayed unreachable for " + confirmWithin() + ")"
				: "";
	}

	IdempotencyPolicy policy() {
		return this.policy;
	}

	String clientKey() {
		return this.clientKey;
	}

	LeaseWatchdog.Lease lease() {
		return this.lease;
	}

}
