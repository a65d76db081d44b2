package io.github.idempotent.store.memory;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

import io.github.idempotent.core.Fingerprint;
import io.github.idempotent.core.IdempotencyKey;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.OwnerToken;
import io.github.idempotent.store.StoredResult;

/**
 * {@link IdempotencyStore} in this JVM's memory, for a single instance and for tests.
 * Every primitive is one atomic {@link ConcurrentHashMap#compute}; expired records are
 * dropped when touched and swept after as many claims as there were records at the last
 * sweep (at least {@value #SWEEP_EVERY}), so sweeping costs a constant amount per claim
 * however many records are held.
 */
public class InMemoryIdempotencyStore implements IdempotencyStore {

	private static final int SWEEP_EVERY = 1024;

	private final ConcurrentHashMap<String, Entry> records = new ConcurrentHashMap<>();

	private final AtomicInteger claimsSinceSweep = new AtomicInteger();

	private final AtomicBoolean sweeping = new AtomicBoolean();

	private volatile int sweepAfter = SWEEP_EVERY;

	@Override
	public ClaimResult claim(IdempotencyKey key, Fingerprint fingerprint, Duration lease) {
		if (this.claimsSinceSweep.incrementAndGet() >= this.sweepAfter) {
			sweepIfDue();
		}
		long now = System.nanoTime();
		ClaimResult[] result = new ClaimResult[1];
		this.records.compute(key.value(), (k, entry) -> {
			if (entry == null || entry.isExpired(now)) {
				String token = OwnerToken.generate();
				result[0] = new ClaimResult.Acquired(token);
				return new Entry(token, fingerprint, null, now + lease.toNanos());
			}
			result[0] = (entry.result != null) ? new ClaimResult.Completed(entry.fingerprint, entry.result)
					: new ClaimResult.InProgress(entry.fingerprint, Duration.ofNanos(entry.expiresAt - now));
			return entry;
		});
		return result[0];
	}

	@Override
	public boolean complete(IdempotencyKey key, String token, Fingerprint fingerprint, StoredResult result,
			Duration ttl) {
		return update(key, token, (entry, now) -> new Entry(null, fingerprint, result, now + ttl.toNanos()));
	}

	@Override
	public boolean release(IdempotencyKey key, String token) {
		return update(key, token, (entry, now) -> null);
	}

	@Override
	public boolean renew(IdempotencyKey key, String token, Fingerprint fingerprint, Duration lease) {
		return update(key, token, (entry, now) -> new Entry(token, fingerprint, null, now + lease.toNanos()));
	}

	/**
	 * Number of records held, expired ones included until they are swept.
	 */
	public int size() {
		return this.records.size();
	}

	/**
	 * Applies {@code transition} if the record is in progress under {@code token}, even
	 * past its lease (only a take-over changes the token), or if it has vanished (then
	 * with {@code entry} {@code null}).
	 */
	private boolean update(IdempotencyKey key, String token, Transition transition) {
		long now = System.nanoTime();
		boolean[] owned = new boolean[1];
		this.records.compute(key.value(), (k, entry) -> {
			if (entry == null || (entry.result == null && token.equals(entry.token))) {
				owned[0] = true;
				return transition.apply(entry, now);
			}
			return entry.isExpired(now) ? null : entry;
		});
		return owned[0];
	}

	private void sweepIfDue() {
		// One caller sweeps; the others carry on.
		if (!this.sweeping.compareAndSet(false, true)) {
			return;
		}
		try {
			if (this.claimsSinceSweep.get() >= this.sweepAfter) {
				this.claimsSinceSweep.set(0);
				sweep();
				this.sweepAfter = Math.max(SWEEP_EVERY, this.records.size());
			}
		}
		finally {
			this.sweeping.set(false);
		}
	}

	private void sweep() {
		long now = System.nanoTime();
		this.records.values().removeIf((entry) -> entry.isExpired(now));
	}

	@FunctionalInterface
	private interface Transition {

		@Nullable Entry apply(@Nullable Entry entry, long now);

	}

	private record Entry(String token, Fingerprint fingerprint, StoredResult result, long expiresAt) {

		boolean isExpired(long now) {
			return now - this.expiresAt >= 0;
		}

	}

}
