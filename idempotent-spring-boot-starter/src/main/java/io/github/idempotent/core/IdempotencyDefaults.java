package io.github.idempotent.core;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * Settings an operation takes where it names none, from the {@code idempotent.*}
 * properties; shared by {@code @Idempotent} and {@link IdempotencyTemplate}.
 *
 * @param inProcessWaitFor how long a duplicate of an {@code @Async},
 * {@code @EventListener} or {@code @Scheduled} call waits; {@code null} for the lease
 * @param releaseOnStatus statuses of an HTTP handler's response that release its key
 */
public record IdempotencyDefaults(Duration ttl, Duration lease, Duration waitFor, Duration retryAfter,
		Duration maxDuration, @Nullable Duration inProcessWaitFor, ReleasedStatuses releaseOnStatus) {

	/**
	 * Defaults with {@link IdempotencyPolicy#DEFAULT_MAX_DURATION}.
	 */
	public IdempotencyDefaults(Duration ttl, Duration lease, Duration waitFor, Duration retryAfter) {
		this(ttl, lease, waitFor, retryAfter, IdempotencyPolicy.DEFAULT_MAX_DURATION, null, ReleasedStatuses.DEFAULT);
	}

	/**
	 * The global max duration, raised to a longer {@code lease}, which alone bounds the
	 * call then.
	 */
	public Duration maxDuration(Duration lease) {
		return (lease.compareTo(this.maxDuration) > 0) ? lease : this.maxDuration;
	}

	/**
	 * One lease by default: by then a live first call still runs and a crashed one has
	 * let its key go.
	 */
	public Duration inProcessWaitFor(Duration lease) {
		return (this.inProcessWaitFor != null) ? this.inProcessWaitFor : lease;
	}

}
