package io.github.idempotent.core;

import java.util.concurrent.TimeUnit;

/**
 * The retries of one {@link OwnerHandle} step after the store could not be reached,
 * backing off from {@value #FIRST_RETRY_MILLIS} ms to {@value #MAX_RETRY_MILLIS} ms for
 * one lease: the owner token fences a repeated step; past one lease the key may be taken.
 */
final class StepConfirmation {

	private static final long FIRST_RETRY_MILLIS = 10;

	private static final long MAX_RETRY_MILLIS = 1000;

	private final LeaseWatchdog.Lease lease;

	/** From the first failure: a client's timeout (a minute) could use up the bound. */
	private long deadline;

	private long nextDelay = FIRST_RETRY_MILLIS;

	private boolean repeated;

	StepConfirmation(LeaseWatchdog.Lease lease) {
		this.lease = lease;
	}

	/** A repeated release that finds another token may have landed the first time. */
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
		// A full Redis (noeviction) refuses the completion but still extends the lease:
		// ask again past the bound, up to maxDuration, rather than let a retry run.
		if (left <= 0 && !(this.lease.isHeld(now) && !this.lease.lost && !this.lease.overdue)) {
			return -1;
		}
		long delay = (left > 0) ? Math.min(this.nextDelay, left) : this.nextDelay;
		this.nextDelay = Math.min(this.nextDelay * 2, MAX_RETRY_MILLIS);
		return delay;
	}

}
