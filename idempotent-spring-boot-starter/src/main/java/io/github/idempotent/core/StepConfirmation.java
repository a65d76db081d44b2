package io.github.idempotent.core;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The retries of one completion or release: only of a failure to reach the store (any
 * other failure would fail again), with a back-off from {@value #FIRST_RETRY_MILLIS} ms
 * doubling up to {@value #MAX_RETRY_MILLIS} ms (the first retry, on a fresh connection,
 * usually succeeds at once after a cut one), until a bound has passed. One per step of an
 * {@link OwnerHandle}.
 */
final class StepConfirmation {

	private static final long FIRST_RETRY_MILLIS = 10;

	private static final long MAX_RETRY_MILLIS = 1000;

	private final LeaseWatchdog.Lease lease;

	/**
	 * How long the step is asked again from its first failure: one lease (see
	 * {@link OwnerHandle#confirmWithin()}).
	 */
	private final Duration bound;

	/**
	 * One bound from the first failure, not from the first attempt: an attempt that fails
	 * by the client's timeout (Lettuce's is a minute by default, longer than a 30 s
	 * lease) would otherwise use up the bound before any retry is sent, and the result
	 * would be given up while the store is reachable again.
	 */
	private long deadline;

	private boolean failed;

	private long nextDelay = FIRST_RETRY_MILLIS;

	private boolean repeated;

	StepConfirmation(LeaseWatchdog.Lease lease, Duration bound) {
		this.lease = lease;
		this.bound = bound;
	}

	/**
	 * Whether the step is being sent again. A release sent again that finds the key held
	 * by another token is not a lost lease: the first one may have landed and a retry
	 * claimed the key since. Either way the key is no longer this call's.
	 */
	boolean repeated() {
		return this.repeated;
	}

	/**
	 * The delay before asking again after {@code failure}, or -1 to give up.
	 */
	long retryIn(Throwable failure) {
		if (!StoreFailureClassifier.isUnavailable(failure)) {
			return -1;
		}
		this.repeated = true;
		long now = System.nanoTime();
		if (!this.failed) {
			this.failed = true;
			this.deadline = now + this.bound.toNanos();
		}
		long left = TimeUnit.NANOSECONDS.toMillis(this.deadline - now);
		if (left <= 0 && !stillHeld(now)) {
			return -1;
		}
		long delay = (left > 0) ? Math.min(this.nextDelay, left) : this.nextDelay;
		this.nextDelay = Math.min(this.nextDelay * 2, MAX_RETRY_MILLIS);
		return delay;
	}

	/**
	 * Whether the store still renews this call's lease although it refuses the step: a
	 * Redis whose memory is full under {@code noeviction} refuses the completion, which
	 * writes a result, but still extends a lease. The placeholder then keeps retries
	 * waiting, so the step is asked again past {@link #bound}, up to the call's
	 * {@code maxDuration}, rather than let the result go and a retry run the method
	 * again.
	 */
	private boolean stillHeld(long now) {
		return this.lease.isHeld(now) && !this.lease.isLost() && !this.lease.isOverdue();
	}

}
