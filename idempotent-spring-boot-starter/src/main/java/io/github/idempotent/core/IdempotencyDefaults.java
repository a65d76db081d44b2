package io.github.idempotent.core;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * Settings an operation takes where it names none (from the {@code idempotent.*}
 * properties): shared by {@code @Idempotent} and {@link IdempotencyTemplate}, so that an
 * operation behaves alike whichever way it is guarded.
 *
 * @param ttl how long a completed result is replayed
 * @param lease how long a placeholder lives without renewal
 * @param waitFor how long a duplicate waits for the first call's result
 * @param retryAfter delay suggested to a refused duplicate
 * @param maxDuration how long one call may hold its key before it stops renewing
 * @param inProcessWaitFor how long a duplicate call of an {@code @Async},
 * {@code @EventListener} or {@code @Scheduled} method waits, which nobody would retry;
 * {@code null} for the operation's lease
 * @param releaseOnStatus statuses of an HTTP handler's response that release its key
 */
public record IdempotencyDefaults(Duration ttl, Duration lease, Duration waitFor, Duration retryAfter,
		Duration maxDuration, @Nullable Duration inProcessWaitFor, ReleasedStatuses releaseOnStatus) {

	/**
	 * Defaults whose responses release their key on {@link ReleasedStatuses#DEFAULT}.
	 */
	public IdempotencyDefaults(Duration ttl, Duration lease, Duration waitFor, Duration retryAfter,
			Duration maxDuration, @Nullable Duration inProcessWaitFor) {
		this(ttl, lease, waitFor, retryAfter, maxDuration, inProcessWaitFor, ReleasedStatuses.DEFAULT);
	}

	/**
	 * Defaults with {@link IdempotencyPolicy#DEFAULT_MAX_DURATION}, and one lease for the
	 * wait of in-process duplicates.
	 */
	public IdempotencyDefaults(Duration ttl, Duration lease, Duration waitFor, Duration retryAfter) {
		this(ttl, lease, waitFor, retryAfter, IdempotencyPolicy.DEFAULT_MAX_DURATION, null);
	}

	/**
	 * The default max duration of an operation whose lease is {@code lease}: the global
	 * one, raised to a longer lease, as the lease alone would bound the call then; an
	 * application that set a 15-minute lease before max-duration existed keeps starting.
	 * Only an operation's own max duration is checked against its lease.
	 */
	public Duration maxDuration(Duration lease) {
		return (lease.compareTo(this.maxDuration) > 0) ? lease : this.maxDuration;
	}

	/**
	 * One lease by default: a first call that is alive renews its lease and still runs
	 * then, and one that crashed has let its key go by then, so the duplicate takes it
	 * over and runs.
	 */
	public Duration inProcessWaitFor(Duration lease) {
		return (this.inProcessWaitFor != null) ? this.inProcessWaitFor : lease;
	}

}
