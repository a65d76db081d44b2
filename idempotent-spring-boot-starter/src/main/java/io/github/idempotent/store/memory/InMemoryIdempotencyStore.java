package io.github.idempotent.store.memory;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.InspectableIdempotencyStore;
import io.github.idempotent.store.OwnerToken;
import io.github.idempotent.store.StoredResult;

/**
 * {@link IdempotencyStore} in this JVM's memory, for a single instance and for tests.
 * Every primitive is one atomic {@link ConcurrentHashMap#compute}; expired records are
 * dropped when touched (placeholders once their take-over memory has passed, see below)
 * and swept after as many claims as there were records at the last sweep (at least
 * {@value BoundedRecords#SWEEP_EVERY}), so sweeping costs a constant amount per claim
 * however many records are held.
 * <p>
 * The store holds at most {@code maximumRecords} records. A claim of a new key when it is
 * full sweeps every expired record first; if every record is still live, the claim fails
 * with {@link InMemoryStoreFullException}. It never evicts a live record to make room: a
 * completed result evicted early would let a retry of its key run the method again, and
 * an evicted placeholder would let a duplicate run alongside its owner.
 * <p>
 * A placeholder whose lease ran out (its call hung past its lease, or never came back),
 * and the tombstone of one an operator deleted with force, stay for the
 * {@code takeoverMemory} after the lease, counted in {@code maximumRecords}: a claim of
 * the key meanwhile takes the call over and knows it (which attempt it is, when the last
 * one started). They are the first records a full store drops, and then that knowledge
 * goes: a call that never finished is worth remembering, not worth refusing a new key.
 */
public class InMemoryIdempotencyStore implements InspectableIdempotencyStore {

	/**
	 * Records held by default: with results of about 1 KB, in the order of 100 MB of
	 * heap.
	 */
	public static final int DEFAULT_MAXIMUM_RECORDS = 100_000;

	/**
	 * How long after its lease ran out a call that never finished is remembered by
	 * default: as long as results are kept by default.
	 */
	public static final Duration DEFAULT_TAKEOVER_MEMORY = Duration.ofHours(24);

	private final BoundedRecords records;

	private final InMemoryStoreInspection inspection;

	/**
	 * Store of at most {@value #DEFAULT_MAXIMUM_RECORDS} records.
	 */
	public InMemoryIdempotencyStore() {
		this(DEFAULT_MAXIMUM_RECORDS);
	}

	/**
	 * Store of at most {@code maximumRecords} records.
	 * @param maximumRecords records held at most, live and expired ones not yet swept
	 */
	public InMemoryIdempotencyStore(int maximumRecords) {
		this(maximumRecords, DEFAULT_TAKEOVER_MEMORY);
	}

	/**
	 * Store of at most {@code maximumRecords} records that remembers a call that never
	 * finished for {@code takeoverMemory} after its lease ran out.
	 * @param maximumRecords records held at most, live and expired ones not yet swept
	 * @param takeoverMemory how long a placeholder whose lease ran out is kept, so that a
	 * claim of its key knows it takes that call over
	 */
	public InMemoryIdempotencyStore(int maximumRecords, Duration takeoverMemory) {
		Assert.isTrue(maximumRecords > 0, () -> "maximumRecords must be positive, not " + maximumRecords
				+ ": set idempotent.store.memory.maximum-records to the number of results to keep");
		Assert.isTrue(takeoverMemory != null && !takeoverMemory.isNegative(), "takeoverMemory must not be negative");
		this.records = new BoundedRecords(maximumRecords, takeoverMemory);
		this.inspection = new InMemoryStoreInspection(this.records);
	}

	@Override
	public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
		this.records.claiming();
		ClaimResult result = tryClaim(key, fingerprint, lease);
		if (result == null) {
			this.records.sweepWhenFull();
			result = tryClaim(key, fingerprint, lease);
			if (result == null) {
				throw this.records.refuse();
			}
		}
		return result;
	}

	/**
	 * Claims the key, or returns {@code null} if it is absent and the store is full.
	 */
	private @Nullable ClaimResult tryClaim(RecordKey key, Fingerprint fingerprint, Duration lease) {
		long now = System.nanoTime();
		ClaimResult[] result = new ClaimResult[1];
		MemoryEntry written = this.records.entries.compute(key.value(), (k, entry) -> {
			if (entry != null && !entry.isExpired(now) && !entry.tombstone()) {
				result[0] = (entry.result() != null) ? new ClaimResult.Completed(entry.fingerprint(), entry.result())
						: new ClaimResult.InProgress(entry.fingerprint(), Duration.ofNanos(entry.expiresAt() - now));
				return entry;
			}
			// An expired record is replaced in place; only an absent key needs room.
			if (entry == null && !this.records.reserve()) {
				return null;
			}
			String token = OwnerToken.generate();
			// A placeholder past its lease, or a tombstone, is a call that never
			// finished:
			// this claim is the attempt after it. An expired result, or a key released
			// by the owner of a first attempt (gone from the map), starts again at 1; a
			// released takeover left a tombstone.
			if (entry != null && entry.result() == null && !this.records.isForgotten(entry, now)) {
				int attempt = (entry.attempt() < Integer.MAX_VALUE) ? entry.attempt() + 1 : entry.attempt();
				result[0] = new ClaimResult.Acquired(token, attempt,
						(entry.claimedAt() != null) ? entry.claimedAt().truncatedTo(ChronoUnit.SECONDS) : null);
				return new MemoryEntry(token, fingerprint, null, now + lease.toNanos(), Instant.now(), attempt, false);
			}
			result[0] = new ClaimResult.Acquired(token);
			return new MemoryEntry(token, fingerprint, null, now + lease.toNanos(), Instant.now(), 1, false);
		});
		if (result[0] instanceof ClaimResult.Acquired && written != null) {
			this.records.written(written.expiresAt());
		}
		return result[0];
	}

	@Override
	public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result, Duration ttl) {
		if (update(key, token,
				(entry, now) -> new MemoryEntry(token, fingerprint, result, now + ttl.toNanos(), null, 1, false))) {
			return true;
		}
		// The same completion again (the executor repeats one whose outcome it could not
		// confirm) finds the very record it would write: a completed record keeps its
		// owner's token for this.
		MemoryEntry entry = this.records.entries.get(key.value());
		return entry != null && entry.result() != null && token.equals(entry.token())
				&& fingerprint.equals(entry.fingerprint()) && result.equals(entry.result());
	}

	@Override
	public boolean release(RecordKey key, String token) {
		// A released takeover becomes a tombstone, as with a forced delete, rather than
		// going: the next claim must still know it takes over a call that never finished
		// (the attempts before this one), not run as attempt 1 and repeat what they did.
		return update(
				key, token, (entry,
						now) -> (entry != null && entry.attempt() > 1) ? new MemoryEntry(entry.token(),
								entry.fingerprint(), null, entry.expiresAt(), entry.claimedAt(), entry.attempt(), true)
								: null);
	}

	@Override
	public boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease) {
		if (update(key, token,
				(entry, now) -> (entry != null)
						? new MemoryEntry(token, fingerprint, null, now + lease.toNanos(), entry.claimedAt(),
								entry.attempt(), false)
						: new MemoryEntry(token, fingerprint, null, now + lease.toNanos(), Instant.now(), 1, false))) {
			return true;
		}
		// Completed by this owner (a completion repeated because its outcome was unknown
		// landed the first time): still its own, nothing to extend.
		MemoryEntry entry = this.records.entries.get(key.value());
		return entry != null && entry.result() != null && token.equals(entry.token());
	}

	@Override
	public Optional<IdempotencyRecord> inspect(RecordKey key) {
		return this.inspection.inspect(key);
	}

	@Override
	public InProgressPage findInProgress(String keyPrefix, Duration olderThan, @Nullable String cursor, int limit) {
		return this.inspection.findInProgress(keyPrefix, olderThan, cursor, limit);
	}

	@Override
	public boolean delete(RecordKey key) {
		return this.inspection.delete(key);
	}

	@Override
	public Deletion deleteUnlessHeld(RecordKey key) {
		return this.inspection.deleteUnlessHeld(key);
	}

	@Override
	public Deletion deleteInProgress(RecordKey key) {
		return this.inspection.deleteInProgress(key);
	}

	/**
	 * Number of records held, expired ones included until they are swept (placeholders
	 * past their lease until their take-over memory has passed, or the store is full).
	 */
	public int size() {
		return this.records.size();
	}

	/**
	 * Applies {@code transition} if the record is in progress under {@code token}, even
	 * past its lease (only a take-over changes the token), or if it has vanished (then
	 * with {@code entry} {@code null}).
	 */
	private boolean update(RecordKey key, String token, Transition transition) {
		long now = System.nanoTime();
		boolean[] owned = new boolean[1];
		MemoryEntry written = this.records.entries.compute(key.value(), (k, entry) -> {
			if (entry == null || (entry.result() == null && !entry.tombstone() && token.equals(entry.token()))) {
				owned[0] = true;
				MemoryEntry next = transition.apply(entry, now);
				if (entry == null && next != null) {
					// A vanished record written anew goes in even when the store is full:
					// refusing would drop the result of a call that ran, and a retry
					// would run it again. Such records number at most the calls running
					// at once.
					this.records.added();
				}
				else if (entry != null && next == null) {
					this.records.removed();
				}
				return next;
			}
			if (this.records.isForgotten(entry, now)) {
				this.records.removed();
				return null;
			}
			return entry;
		});
		if (owned[0] && written != null) {
			this.records.written(written.expiresAt());
		}
		return owned[0];
	}

	@FunctionalInterface
	private interface Transition {

		@Nullable MemoryEntry apply(@Nullable MemoryEntry entry, long now);

	}

}
