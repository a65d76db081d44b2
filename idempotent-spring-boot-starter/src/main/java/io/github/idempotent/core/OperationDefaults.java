package io.github.idempotent.core;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.util.Assert;

/**
 * The settings of every operation that names none of its own, held by the executor as one
 * value: the {@code idempotent.*} properties, or {@link #DEFAULT}.
 *
 * @param ttl how long a completed result is replayed
 * @param lease how long the placeholder lives without renewal
 * @param waitFor how long a duplicate waits for the first call's result
 * @param inProcessWaitFor the {@code waitFor} of {@code @Async}, {@code @EventListener}
 * and {@code @Scheduled} methods, whose refused duplicates nobody retries; {@code null}
 * for one lease, by when a crashed first call has let its key go
 * @param retryAfter delay suggested to a refused duplicate
 * @param maxDuration how long one call may hold its key, raised to a longer lease
 * @param releaseOnStatus response statuses of an HTTP handler that release its key
 */
record OperationDefaults(Duration ttl, Duration lease, Duration waitFor, @Nullable Duration inProcessWaitFor,
		Duration retryAfter, Duration maxDuration, ReleasedStatuses releaseOnStatus) {

	/**
	 * Those of an executor built without the auto-configuration, repeated as literals in
	 * the properties' metadata (IdempotentAutoConfigurationTests keeps them equal).
	 */
	static final OperationDefaults DEFAULT = new OperationDefaults(Duration.ofHours(24), Duration.ofSeconds(30),
			Duration.ZERO, null, Duration.ofSeconds(1), IdempotencyPolicy.DEFAULT_MAX_DURATION,
			ReleasedStatuses.DEFAULT);

	OperationDefaults {
		Assert.notNull(ttl, "ttl must not be null");
		Assert.notNull(lease, "lease must not be null");
		Assert.notNull(waitFor, "waitFor must not be null");
		Assert.notNull(retryAfter, "retryAfter must not be null");
		Assert.notNull(maxDuration, "maxDuration must not be null");
		Assert.notNull(releaseOnStatus, "releaseOnStatus must not be null");
	}

	Duration inProcessWaitFor(Duration lease) {
		return (this.inProcessWaitFor != null) ? this.inProcessWaitFor : lease;
	}

	/** Raised to a longer {@code lease}, which alone bounds the call then. */
	Duration maxDuration(Duration lease) {
		return (lease.compareTo(this.maxDuration) > 0) ? lease : this.maxDuration;
	}

}
