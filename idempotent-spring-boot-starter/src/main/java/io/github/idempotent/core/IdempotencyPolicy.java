package io.github.idempotent.core;

import java.time.Duration;
import java.util.List;

import org.springframework.util.Assert;

/**
 * Settings of one idempotent operation, resolved once (from the annotation and the
 * properties) and reused on every call.
 *
 * @param name operation name, part of the scoped key
 * @param ttl how long a completed result is replayed
 * @param lease how long an in-progress claim lives without renewal
 * @param waitFor how long a duplicate waits for the first call's result
 * @param retryAfter delay suggested to a refused duplicate
 * @param cacheFor exception types stored as outcomes instead of releasing the key
 * @param codec codec bound to the operation's return type
 */
public record IdempotencyPolicy(String name, Duration ttl, Duration lease, Duration waitFor, Duration retryAfter,
		List<Class<? extends Throwable>> cacheFor, ResultCodec.Binding codec) {

	public IdempotencyPolicy {
		Assert.hasText(name, "name must not be empty");
		Assert.isTrue(!ttl.isNegative() && !ttl.isZero(), () -> "ttl of " + name + " must be positive");
		Assert.isTrue(!lease.isNegative() && !lease.isZero(), () -> "lease of " + name + " must be positive");
		Assert.isTrue(!waitFor.isNegative(), () -> "waitFor of " + name + " must not be negative");
		Assert.isTrue(!retryAfter.isNegative(), () -> "retryAfter of " + name + " must not be negative");
		cacheFor = List.copyOf(cacheFor);
	}

	boolean isCached(Throwable ex) {
		for (Class<? extends Throwable> type : this.cacheFor) {
			if (type.isInstance(ex)) {
				return true;
			}
		}
		return false;
	}

}
