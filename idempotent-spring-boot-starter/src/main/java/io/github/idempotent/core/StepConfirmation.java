package io.github.idempotent.core;

import java.util.concurrent.TimeUnit;

/**
 * The retries of one {@link OwnerHandle} step: only of a failure to reach the store (any
 * other would fail again), backing off from {@value #FIRST_RETRY_MILLIS} ms to
 * {@value #MAX_RETRY_MILLIS} ms, for one lease. Repeating a step is safe, as it is fenced
 * by the owner token; past one lease the placeholder may have been taken over
 * (docs/guide.md "Guarantees and their limits").
 */
final class StepConfirmation {

	private static final long FIRST_RETRY_MILLIS = 10;

	private static final long MAX_RETRY_MILLIS = 1000;

	private final LeaseWatchdog.Lease lease;

	/**
	 * From the first failure, not the first attempt: a client's timeout (Lettuce's is a
	 * minute) would otherwise use up the bound before any retry is sent.
	 */
	private long deadline;

	private long nextDelay = FIRST_RETRY_MILLIS;

	private boolean repeated;

	StepConfirmation(LeaseWatchdog.Lease lease) {
		this.lease = lease;
	}

	/**
	 * A release sent again that finds another token is no lost lease: the first may have
	 * landed and a retry claimed the key since.
	 */
	boolean repeated() {
		return this.repeated;
	}

	/** The delay before asking again after {@code failure}, or -1 to give up. */
	long retryIn(Throwable failure) {
		if (!StoreFailureClassifier.isUnavailable(failure)) {
			return -1;
		}
		long now = System.nanoTime();
		if (!this.repeated) {
			this.repeated = true;
			this.deadline = now + this.lease.call.policy.lease().toNanos();
		}
		long left = TimeUnit.NANOSECONDS.toMillis(this.deadline - now);
		// A Redis full under noeviction refuses the completion but still extends the
		// lease, so retries keep waiting: the step is asked again past the bound, up to
		// maxDuration, rather than let a retry run the method again.
		if (left <= 0 && !(this.lease.isHeld(now) && !this.lease.isLost() && !this.lease.isOverdue())) {
			return -1;
		}
		long delay = (left > 0) ? Math.min(this.nextDelay, left) : this.nextDelay;
		this.nextDelay = Math.min(this.nextDelay * 2, MAX_RETRY_MILLIS);
		return delay;
	}

}
