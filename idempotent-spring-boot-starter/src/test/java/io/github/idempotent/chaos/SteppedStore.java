package io.github.idempotent.chaos;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.InspectableIdempotencyStore;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;

/**
 * One instance's view of the shared store, as {@link InterleavingScheduler} steps it: a
 * point before each call (the request on its way) and after it (the answer on its way),
 * so that any other thread may act between a request and the store, and between the
 * store's answer and the thread that reads it.
 * <p>
 * The store keeps every lease it is given for an hour: a record in progress leaves only
 * by its owner or by the operator's forced delete, never because real time passed, so
 * that what the store answers depends on the order of steps alone. The lease watchdog
 * still works to the policy's lease of a millisecond, and renews at every tick.
 * <p>
 * It also checks the promise of a forced delete (docs/operations.md): once the store has
 * answered that it deleted a record in progress, the next claim of the key is free; its
 * old owner never writes the record back.
 */
final class SteppedStore implements InspectableIdempotencyStore {

	private static final Duration STORE_LEASE = Duration.ofHours(1);

	private final InterleavingScheduler scheduler;

	private final String instance;

	private final InspectableIdempotencyStore delegate;

	private final Fences fences;

	private final AtomicInteger renewals = new AtomicInteger();

	/**
	 * The step in which the calling thread's latest store call reached the store.
	 */
	private static final ThreadLocal<Integer> reachedAt = ThreadLocal.withInitial(() -> 0);

	SteppedStore(InterleavingScheduler scheduler, String instance, InspectableIdempotencyStore delegate,
			Fences fences) {
		this.scheduler = scheduler;
		this.instance = instance;
		this.delegate = delegate;
		this.fences = fences;
	}

	@Override
	public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
		return step("claim", () -> {
			ClaimResult claim = this.delegate.claim(key, fingerprint, STORE_LEASE);
			this.fences.claimed(this.instance, claim);
			return claim;
		});
	}

	@Override
	public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result, Duration ttl) {
		return step("complete", () -> this.delegate.complete(key, token, fingerprint, result, ttl));
	}

	@Override
	public boolean release(RecordKey key, String token) {
		return step("release", () -> this.delegate.release(key, token));
	}

	@Override
	public boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease) {
		return step("renew", () -> this.delegate.renew(key, token, fingerprint, STORE_LEASE));
	}

	@Override
	public Optional<IdempotencyRecord> inspect(RecordKey key) {
		return this.delegate.inspect(key);
	}

	@Override
	public InProgressPage findInProgress(String keyPrefix, Duration olderThan, @Nullable String cursor, int limit) {
		return this.delegate.findInProgress(keyPrefix, olderThan, cursor, limit);
	}

	@Override
	public boolean delete(RecordKey key) {
		return step("delete", () -> this.delegate.delete(key));
	}

	@Override
	public Deletion deleteInProgress(RecordKey key) {
		return step("forced delete", () -> {
			Deletion deletion = this.delegate.deleteInProgress(key);
			if (deletion == Deletion.DELETED) {
				this.fences.forcedDelete();
			}
			return deletion;
		});
	}

	private <T> T step(String call, Supplier<T> body) {
		String name = Thread.currentThread().getName();
		if (name.startsWith("idempotent-lease-renewal")) {
			// Pool threads are reused in no fixed order; a renewal is named by its rank
			// among this instance's renewals, which the order of steps decides.
			name = this.instance + ".renewal#" + this.renewals.incrementAndGet();
		}
		this.scheduler.point(name, call);
		reachedAt.set(this.scheduler.step());
		T answer = body.get();
		this.scheduler.point(name, call + " answered " + answer);
		return answer;
	}

	/**
	 * The step in which the calling thread's latest store call reached the store: a call
	 * holds its key from the step its claim reached the store, not from the one its
	 * method starts in.
	 */
	static int reachedAt() {
		return reachedAt.get();
	}

	/**
	 * What the forced deletes of one schedule promise, checked at each claim.
	 */
	static final class Fences {

		private final List<String> violations;

		private boolean freed;

		Fences(List<String> violations) {
			this.violations = violations;
		}

		synchronized void forcedDelete() {
			this.freed = true;
		}

		synchronized void claimed(String instance, ClaimResult claim) {
			if (this.freed && claim instanceof ClaimResult.InProgress) {
				this.violations.add("the first claim after a forced delete (instance " + instance
						+ ") found the key in progress: the deleted record was written back");
			}
			this.freed = false;
		}

	}

}
