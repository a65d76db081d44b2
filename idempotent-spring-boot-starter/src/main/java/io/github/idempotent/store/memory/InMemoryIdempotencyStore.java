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
 * The store holds at most {@code maximumRecords} records and about {@code maximumBytes}
 * of heap (estimated from the sizes of each record's key, fingerprint and result, plus a
 * fixed overhead), and, with a quota, about {@code maximumBytesPerScope} for the records
 * of one scope (the scope part of the record key: one user's, under the principal scope),
 * so that one client cannot fill it for everyone. A claim of a new key when it, or the
 * key's scope, is full sweeps every expired record first; if every record is still live,
 * the claim fails with {@link InMemoryStoreFullException}, which the executor refuses in
 * every failure mode. It never evicts a live record to make room: a completed result
 * evicted early would let a retry of its key run the method again, and an evicted
 * placeholder would let a duplicate run alongside its owner. For the same reason a result
 * is stored even when it takes the store past its size: the bound can be exceeded by the
 * results of the calls running at once.
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
	 * Estimated bytes of heap held by default.
	 */
	public static final long DEFAULT_MAXIMUM_BYTES = 100L * 1024 * 1024;

	/**
	 * How long after its lease ran out a call that never finished is remembered by
	 * default: as long as results are kept by default.
	 */
	public static final Duration DEFAULT_TAKEOVER_MEMORY = Duration.ofHours(24);

	private final BoundedRecords records;

	private final InMemoryStoreInspection inspection;

	/**
	 * Store of at most {@value #DEFAULT_MAXIMUM_RECORDS} records and
	 * {@value #DEFAULT_MAXIMUM_BYTES} bytes, without a quota per scope.
	 */
	public InMemoryIdempotencyStore() {
		this(DEFAULT_MAXIMUM_RECORDS);
	}

	/**
	 * Store of at most {@code maximumRecords} records and {@value #DEFAULT_MAXIMUM_BYTES}
	 * bytes, without a quota per scope.
	 * @param maximumRecords records held at most, live and expired ones not yet swept
	 */
	public InMemoryIdempotencyStore(int maximumRecords) {
		this(maximumRecords, DEFAULT_TAKEOVER_MEMORY);
	}

	/**
	 * Store of at most {@code maximumRecords} records and {@value #DEFAULT_MAXIMUM_BYTES}
	 * bytes, without a quota per scope, that remembers a call that never finished for
	 * {@code takeoverMemory} after its lease ran out.
	 * @param maximumRecords records held at most, live and expired ones not yet swept
	 * @param takeoverMemory how long a placeholder whose lease ran out is kept, so that a
	 * claim of its key knows it takes that call over
	 */
	public InMemoryIdempotencyStore(int maximumRecords, Duration takeoverMemory) {
		this(maximumRecords, DEFAULT_MAXIMUM_BYTES, DEFAULT_MAXIMUM_BYTES, takeoverMemory);
	}

	/**
	 * Store of at most {@code maximumRecords} records and about {@code maximumBytes} of
	 * heap, about {@code maximumBytesPerScope} of it for the records of one scope, that
	 * remembers a call that never finished for {@code takeoverMemory} after its lease ran
	 * out.
	 * @param maximumRecords records held at most, live and expired ones not yet swept
	 * @param maximumBytes estimated bytes held at most
	 * @param maximumBytesPerScope estimated bytes held at most for the records of one
	 * scope; {@code maximumBytes} or more for no quota
	 * @param takeoverMemory how long a placeholder whose lease ran out is kept, so that a
	 * claim of its key knows it takes that call over
	 */
	public InMemoryIdempotencyStore(int maximumRecords, long maximumBytes, long maximumBytesPerScope,
			Duration takeoverMemory) {
		Assert.isTrue(maximumRecords > 0, () -> "maximumRecords must be positive, not " + maximumRecords
				+ ": set idempotent.store.memory.maximum-records to the number of results to keep");
		Assert.isTrue(maximumBytes > 0, () -> "maximumBytes must be positive, not " + maximumBytes
				+ ": set idempotent.store.memory.maximum-size to the heap the records may take");
		Assert.isTrue(maximumBytesPerScope > 0, () -> "maximumBytesPerScope must be positive, not "
				+ maximumBytesPerScope + ": set idempotent.store.memory.maximum-size-per-scope, or leave it unset");
		Assert.isTrue(takeoverMemory != null && !takeoverMemory.isNegative(), "takeoverMemory must not be negative");
		this.records = new BoundedRecords(maximumRecords, maximumBytes, maximumBytesPerScope, takeoverMemory);
		this.inspection = new InMemoryStoreInspection(this.records);
	}

	@Override
	public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
		this.records.claiming();
		BoundedRecords.Room[] room = { BoundedRecords.Room.FITS };
		ClaimResult result = tryClaim(key, fingerprint, lease, room);
		if (result == null) {
			this.records.sweepWhenFull();
			result = tryClaim(key, fingerprint, lease, room);
			if (result == null) {
				throw this.records.refuse(room[0], key.value());
			}
		}
		return result;
	}

	/**
	 * Claims the key, or returns {@code null} if it is absent and the store or its scope
	 * is full (then saying which in {@code room}).
	 */
	private @Nullable ClaimResult tryClaim(RecordKey key, Fingerprint fingerprint, Duration lease,
			BoundedRecords.Room[] room) {
		long now = System.nanoTime();
		ClaimResult[] result = new ClaimResult[1];
		MemoryEntry written = this.records.entries.compute(key.value(), (k, entry) -> {
			if (entry != null && !entry.isExpired(now) && !entry.tombstone()) {
				result[0] = (entry.result() != null) ? new ClaimResult.Completed(entry.fingerprint(), entry.result())
						: new ClaimResult.InProgress(entry.fingerprint(), Duration.ofNanos(entry.expiresAt() - now));
				return entry;
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
				MemoryEntry next = new MemoryEntry(token, fingerprint, null, now + lease.toNanos(), Instant.now(),
						attempt, false);
				this.records.replaced(k, entry, next);
				return next;
			}
			MemoryEntry next = new MemoryEntry(token, fingerprint, null, now + lease.toNanos(), Instant.now(), 1,
					false);
			// An expired record is replaced in place; only an absent key needs room.
			if (entry == null) {
				room[0] = this.records.reserve(k, next);
				if (room[0] != BoundedRecords.Room.FITS) {
					return null;
				}
			}
			else {
				this.records.replaced(k, entry, next);
			}
			result[0] = new ClaimResult.Acquired(token);
			return next;
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
	 * Estimated bytes of heap the records take, expired ones included until they are
	 * swept.
	 */
	public long sizeInBytes() {
		return this.records.usedBytes();
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
					this.records.added(k, next);
				}
				else if (entry != null && next == null) {
					this.records.removed(k, entry);
				}
				else if (entry != null) {
					// A result goes in even when it takes the store past its size, for
					// the same reason.
					this.records.replaced(k, entry, next);
				}
				return next;
			}
			if (this.records.isForgotten(entry, now)) {
				this.records.removed(k, entry);
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
