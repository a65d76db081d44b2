package io.github.idempotent.core;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import java.util.concurrent.CompletableFuture;

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

	private final IdempotencyExecutor executor;

	private final IdempotencyPolicy policy;

	private final String clientKey;

	private final RecordKey key;

	private final LeaseWatchdog.Lease lease;

	private final IdempotencyObserver observer;

	OwnerHandle(IdempotencyExecutor executor, IdempotencyPolicy policy, String clientKey, RecordKey key,
			LeaseWatchdog.Lease lease, IdempotencyObserver observer) {
		this.executor = executor;
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
	 * Stops the lease renewal and stores {@code result} for replay. A store that fails
	 * here is logged, not thrown: the method has run and its result belongs to the
	 * caller.
	 */
	public void complete(@Nullable Object result) {
		this.executor.unwatch(this.lease);
		this.observer.executed(this.policy, this.clientKey);
		if (isFencedOut()) {
			releaseFencedOut();
			return;
		}
		StoredResult encoded = encode(result);
		this.observer.step(this.policy, this.clientKey, IdempotencyObserver.Step.COMPLETING);
		store(encoded);
	}

	/**
	 * Stops the lease renewal and deletes the claim so that a retry runs the method, or,
	 * when {@code cacheFor} lists {@code failure}'s type, stores it so that retries get
	 * the same error. A store failure is added to {@code failure} as suppressed.
	 */
	public void release(Throwable failure) {
		this.executor.unwatch(this.lease);
		if (isFencedOut()) {
			releaseFencedOut();
			return;
		}
		if (StoredOutcome.isStored(this.policy, this.clientKey, failure)) {
			this.observer.step(this.policy, this.clientKey, IdempotencyObserver.Step.COMPLETING);
			store(StoredOutcome.error(failure));
			return;
		}
		this.observer.step(this.policy, this.clientKey, IdempotencyObserver.Step.RELEASING);
		try {
			if (!this.executor.getStore().release(this.key, token())) {
				releasedByOther();
			}
		}
		catch (RuntimeException ex) {
			failure.addSuppressed(ex);
			logReleaseFailure(ex);
		}
	}

	/**
	 * {@link #complete} for a result that arrived on a completion signal: the store is
	 * written without blocking the signalling thread. The returned stage completes, never
	 * exceptionally, once the store has answered.
	 */
	public CompletableFuture<Void> completeAsync(@Nullable Object result) {
		this.executor.unwatch(this.lease);
		this.observer.executed(this.policy, this.clientKey);
		if (isFencedOut()) {
			return releaseFencedOutAsync();
		}
		StoredResult encoded = encode(result);
		this.observer.step(this.policy, this.clientKey, IdempotencyObserver.Step.COMPLETING);
		return storeAsync(encoded);
	}

	/**
	 * {@link #release} for a failure that arrived on a completion signal, without
	 * blocking the signalling thread. The returned stage completes, never exceptionally,
	 * once the store has answered.
	 */
	public CompletableFuture<Void> releaseAsync(Throwable failure) {
		this.executor.unwatch(this.lease);
		if (isFencedOut()) {
			return releaseFencedOutAsync();
		}
		if (StoredOutcome.isStored(this.policy, this.clientKey, failure)) {
			this.observer.step(this.policy, this.clientKey, IdempotencyObserver.Step.COMPLETING);
			return storeAsync(StoredOutcome.error(failure));
		}
		return abandonAsync(failure);
	}

	/**
	 * Deletes the claim whatever the failure: for a caller that went away before the
	 * method started, when nothing ran that could be stored.
	 */
	CompletableFuture<Void> abandonAsync(Throwable failure) {
		this.executor.unwatch(this.lease);
		this.observer.step(this.policy, this.clientKey, IdempotencyObserver.Step.RELEASING);
		return this.executor.releaseAsync(this.key, token()).handle((released, ex) -> {
			if (ex != null) {
				failure.addSuppressed(ex);
				logReleaseFailure(ex);
			}
			else if (!released) {
				releasedByOther();
			}
			return null;
		});
	}

	private CompletableFuture<Void> storeAsync(StoredResult result) {
		return this.executor.completeAsync(this.key, token(), fingerprint(), result, this.policy.ttl())
			.handle((completed, ex) -> {
				if (ex != null) {
					logCompleteFailure(ex);
				}
				else if (!completed) {
					completedByOther();
				}
				return null;
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

	/**
	 * Ends a fenced-out call without writing. Past maxDuration its placeholder may still
	 * be there until its lease runs out: it is released, which deletes it only if it
	 * still holds this token, so the key frees at once; the release is the simplest step
	 * that can never write a result (a completion conditional on the token would still
	 * need the lease's end to tell a stale owner from a current one). After a lost lease
	 * the key is someone else's, or a tombstone's: nothing is sent.
	 */
	private void releaseFencedOut() {
		if (!this.lease.isOverdue()) {
			return;
		}
		logNotStored();
		try {
			this.executor.getStore().release(this.key, token());
		}
		catch (RuntimeException ex) {
			logReleaseFailure(ex);
		}
	}

	private CompletableFuture<Void> releaseFencedOutAsync() {
		if (!this.lease.isOverdue()) {
			return CompletableFuture.completedFuture(null);
		}
		logNotStored();
		return this.executor.releaseAsync(this.key, token()).handle((released, ex) -> {
			if (ex != null) {
				logReleaseFailure(ex);
			}
			return null;
		});
	}

	private void logNotStored() {
		logger.warn("Key '" + this.clientKey + "' of " + this.policy.name() + ": the call ended after its maxDuration ("
				+ this.policy.maxDuration() + "); its outcome goes to its caller but is not stored, and a retry runs "
				+ "the method again");
	}

	StoredResult encode(@Nullable Object result) {
		return StoredOutcome.value(this.policy, this.clientKey, result, this.executor.maxResultSize(),
				this.executor.resultCompression());
	}

	private void store(StoredResult result) {
		try {
			if (!this.executor.getStore().complete(this.key, token(), fingerprint(), result, this.policy.ttl())) {
				completedByOther();
			}
		}
		catch (RuntimeException ex) {
			logCompleteFailure(ex);
		}
	}

	void completedByOther() {
		if (!this.lease.isLost()) {
			this.executor.leaseLost(this.policy, this.clientKey, "complete", this.lease.isHeld(System.nanoTime()),
					this.observer);
		}
	}

	void releasedByOther() {
		if (!this.lease.isLost()) {
			this.executor.leaseLost(this.policy, this.clientKey, "release", this.lease.isHeld(System.nanoTime()),
					this.observer);
		}
	}

	void logCompleteFailure(Throwable ex) {
		// The method has run: its result goes back to this caller. The store may have
		// stored it all the same (only the answer was lost): then retries get it
		// replayed. If not, they see the placeholder until the lease expires, then may
		// run the method again.
		logger.error("Could not confirm that the result of " + this.policy.name() + " for key '" + this.clientKey
				+ "' was stored: if it was not, retries are refused as in progress until the lease expires "
				+ "and may then run the method again", ex);
	}

	void logReleaseFailure(Throwable ex) {
		logger.error("Could not release key '" + this.clientKey + "' of " + this.policy.name()
				+ " after the method failed; retries are refused until its lease expires", ex);
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
