package io.github.idempotent.core;

import java.time.Duration;
import java.util.List;

import org.springframework.util.Assert;

import io.github.idempotent.annotation.DuplicateHandling;

/**
 * Settings of one idempotent operation, resolved once and reused on every call.
 *
 * @param name operation name, part of the record key
 * @param ttl how long a completed result is replayed
 * @param lease how long the placeholder lives without renewal
 * @param waitFor how long a duplicate waits for the first call's result
 * @param retryAfter delay suggested to a refused duplicate
 * @param cacheFor exception types stored as outcomes instead of releasing the key
 * @param codec codec bound to the operation's return type
 * @param maxDuration how long one call may hold its key: past it, its lease is no longer
 * renewed and its result is not stored
 * @param duplicates what a call does when its key has completed
 * @param releaseOnStatus response statuses of an HTTP handler that release its key
 */
public record IdempotencyPolicy(String name, Duration ttl, Duration lease, Duration waitFor, Duration retryAfter,
		List<Class<? extends Throwable>> cacheFor, ResultCodec.Binding codec, Duration maxDuration,
		DuplicateHandling duplicates, ReleasedStatuses releaseOnStatus) {

	/**
	 * Default of {@link #maxDuration}: longer than any client or gateway timeout, short
	 * enough that a hung call frees its key soon.
	 */
	public static final Duration DEFAULT_MAX_DURATION = Duration.ofMinutes(10);

	/** A policy whose {@link #maxDuration} is the default, or the lease if longer. */
	public IdempotencyPolicy(String name, Duration ttl, Duration lease, Duration waitFor, Duration retryAfter,
			List<Class<? extends Throwable>> cacheFor, ResultCodec.Binding codec) {
		this(name, ttl, lease, waitFor, retryAfter, cacheFor, codec, OperationDefaults.DEFAULT.maxDuration(lease));
	}

	/** A policy whose duplicates are replayed ({@link DuplicateHandling#REPLAY}). */
	public IdempotencyPolicy(String name, Duration ttl, Duration lease, Duration waitFor, Duration retryAfter,
			List<Class<? extends Throwable>> cacheFor, ResultCodec.Binding codec, Duration maxDuration) {
		this(name, ttl, lease, waitFor, retryAfter, cacheFor, codec, maxDuration, DuplicateHandling.REPLAY);
	}

	/** A policy whose responses release their key on {@link ReleasedStatuses#DEFAULT}. */
	public IdempotencyPolicy(String name, Duration ttl, Duration lease, Duration waitFor, Duration retryAfter,
			List<Class<? extends Throwable>> cacheFor, ResultCodec.Binding codec, Duration maxDuration,
			DuplicateHandling duplicates) {
		this(name, ttl, lease, waitFor, retryAfter, cacheFor, codec, maxDuration, duplicates, ReleasedStatuses.DEFAULT);
	}

	public IdempotencyPolicy {
		Assert.hasText(name, "name must not be empty");
		Assert.isTrue(!ttl.isNegative() && !ttl.isZero(), () -> "ttl of " + name + " must be positive");
		Assert.isTrue(!lease.isNegative() && !lease.isZero(), () -> "lease of " + name + " must be positive");
		Assert.isTrue(!waitFor.isNegative(), () -> "waitFor of " + name + " must not be negative");
		Assert.isTrue(!retryAfter.isNegative(), () -> "retryAfter of " + name + " must not be negative");
		Assert.isTrue(maxDuration != null && maxDuration.compareTo(lease) >= 0,
				() -> "maxDuration of " + name + " (" + maxDuration + ") must not be shorter than its lease (" + lease
						+ "): the lease is the least time "
						+ "a call holds its key; raise maxDuration (idempotent.max-duration) or shorten the lease");
		Assert.notNull(duplicates, () -> "duplicates of " + name + " must not be null");
		Assert.notNull(releaseOnStatus, () -> "releaseOnStatus of " + name + " must not be null");
		cacheFor = List.copyOf(cacheFor);
	}

}
