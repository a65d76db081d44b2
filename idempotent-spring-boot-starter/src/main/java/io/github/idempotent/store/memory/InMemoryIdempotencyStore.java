package io.github.idempotent.store.memory;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiFunction;

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
 * Every primitive is one atomic {@link ConcurrentHashMap#compute}. Bounded by records, by
 * estimated heap and optionally per scope, it never evicts a live record (a retry would
 * run the method again) but refuses new keys with {@link InMemoryStoreFullException}; a
 * result goes in regardless, so the results of the calls running at once may exceed it.
 */
public class InMemoryIdempotencyStore implements InspectableIdempotencyStore {

	/** Records held by default: with results of about 1 KB, about 100 MB of heap. */
	public static final int DEFAULT_MAXIMUM_RECORDS = 100_000;

	/** Estimated bytes of heap held by default. */
	public static final long DEFAULT_MAXIMUM_BYTES = 100L * 1024 * 1024;

	/** Default of the take-over memory. */
	public static final Duration DEFAULT_TAKEOVER_MEMORY = Duration.ofHours(24);

	private static final int SWEEP_EVERY = 1024;

	// Far enough ahead of System.nanoTime() to stand for "never", near enough that the
	// difference of two such times cannot overflow.
	private static final long NEVER = Long.MAX_VALUE / 2;

	private final ConcurrentHashMap<String, MemoryEntry> entries = new ConcurrentHashMap<>();

	/** Estimated heap of a record besides its strings and its result. */
	private static final int ENTRY_OVERHEAD = 200;

	private final int maximumRecords;

	private final long maximumBytes;

	private final long maximumBytesPerScope;

	private final long takeoverMemoryNanos;

	private final AtomicLong usedBytes = new AtomicLong();

	private final ConcurrentHashMap<String, Long> scopeBytes = new ConcurrentHashMap<>();

	// Not entries.size(): a claim reserves its place atomically, lest concurrent claims
	// overshoot the bound.
	private final AtomicLong recordCount = new AtomicLong();

	// A lower bound on every expiry, made exact by every sweep: while it lies ahead, a
	// full store refuses new keys without scanning.
	private final AtomicLong earliestExpiry = new AtomicLong(System.nanoTime() + NEVER);

	private final AtomicInteger claimsSinceSweep = new AtomicInteger();

	private final ReentrantLock sweepLock = new ReentrantLock();

	private volatile int sweepAfter = SWEEP_EVERY;

	/**
	 * Store of {@value #DEFAULT_MAXIMUM_RECORDS} records and
	 * {@value #DEFAULT_MAXIMUM_BYTES} bytes at most.
	 */
	public InMemoryIdempotencyStore() {
		this(DEFAULT_MAXIMUM_RECORDS);
	}

	/** Store of {@code maximumRecords} records at most, unswept expired ones included. */
	public InMemoryIdempotencyStore(int maximumRecords) {
		this(maximumRecords, DEFAULT_TAKEOVER_MEMORY);
	}

	/** As {@link #InMemoryIdempotencyStore(int, long, long, Duration)} without quota. */
	public InMemoryIdempotencyStore(int maximumRecords, Duration takeoverMemory) {
		this(maximumRecords, DEFAULT_MAXIMUM_BYTES, DEFAULT_MAXIMUM_BYTES, takeoverMemory);
	}

	/**
	 * @param maximumRecords records held at most, expired ones not yet swept included
	 * @param maximumBytes estimated bytes held at most
	 * @param maximumBytesPerScope estimated bytes for one scope; {@code maximumBytes} or
	 * more for no quota
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
		this.maximumRecords = maximumRecords;
		this.maximumBytes = maximumBytes;
		this.maximumBytesPerScope = maximumBytesPerScope;
		// Bounded so that expiresAt + memory cannot overflow past NEVER's margin.
		this.takeoverMemoryNanos = Math.min(takeoverMemory.toNanos(), NEVER / 4);
	}

	@Override
	public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
		claiming();
		try {
			return tryClaim(key, fingerprint, lease);
		}
		catch (InMemoryStoreFullException ex) {
			// Not logged here: the protocol warns of a full store once a minute.
			sweepWhenFull();
			return tryClaim(key, fingerprint, lease);
		}
	}

	/** Throws {@link InMemoryStoreFullException} for a new key without room. */
	private ClaimResult tryClaim(RecordKey key, Fingerprint fingerprint, Duration lease) {
		long now = System.nanoTime();
		ClaimResult[] result = new ClaimResult[1];
		MemoryEntry written = this.entries.compute(key.value(), (k, entry) -> {
			if (entry != null && !entry.isExpired(now) && !entry.tombstone()) {
				result[0] = (entry.result() != null) ? new ClaimResult.Completed(entry.fingerprint(), entry.result())
						: new ClaimResult.InProgress(entry.fingerprint(), Duration.ofNanos(entry.expiresAt() - now));
				return entry;
			}
			// A placeholder past its lease, or a tombstone: this claim takes it over.
			boolean takeover = entry != null && entry.result() == null && !isForgotten(entry, now);
			int attempt = !takeover ? 1 : (entry.attempt() < Integer.MAX_VALUE) ? entry.attempt() + 1 : entry.attempt();
			String token = OwnerToken.generate();
			MemoryEntry next = new MemoryEntry(token, fingerprint, null, now + lease.toNanos(), Instant.now(), attempt,
					false);
			if (entry == null) {
				reserve(k, next);
			}
			else {
				changed(k, entry, next);
			}
			result[0] = new ClaimResult.Acquired(token, attempt,
					(takeover && entry.claimedAt() != null) ? entry.claimedAt().truncatedTo(ChronoUnit.SECONDS) : null);
			return next;
		});
		if (result[0] instanceof ClaimResult.Acquired) {
			written(written.expiresAt());
		}
		return result[0];
	}

	@Override
	public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result, Duration ttl) {
		if (update(key, token,
				(entry, now) -> new MemoryEntry(token, fingerprint, result, now + ttl.toNanos(), null, 1, false))) {
			return true;
		}
		MemoryEntry entry = completedBy(key, token);
		return entry != null && fingerprint.equals(entry.fingerprint()) && result.equals(entry.result());
	}

	/** The record of {@code key} if it is a result {@code token} stored. */
	private @Nullable MemoryEntry completedBy(RecordKey key, String token) {
		MemoryEntry entry = this.entries.get(key.value());
		return (entry != null && entry.result() != null && token.equals(entry.token())) ? entry : null;
	}

	@Override
	public boolean release(RecordKey key, String token) {
		// A released takeover becomes a tombstone, so the next claim still knows it takes
		// over a call that never finished.
		return update(key, token, (entry, now) -> (entry != null && entry.attempt() > 1) ? entry.fenced() : null);
	}

	@Override
	public boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease) {
		return update(key, token, (entry, now) -> new MemoryEntry(token, fingerprint, null, now + lease.toNanos(),
				(entry != null) ? entry.claimedAt() : Instant.now(), (entry != null) ? entry.attempt() : 1, false))
				|| completedBy(key, token) != null;
	}

	@Override
	public Optional<IdempotencyRecord> inspect(RecordKey key) {
		MemoryEntry entry = this.entries.get(key.value());
		long now = System.nanoTime();
		return (entry != null && !entry.isExpired(now) && !entry.tombstone()) ? Optional.of(entry.toRecord(key, now))
				: Optional.empty();
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Key order, {@code limit} at a time; walks every record, as a store for one JVM may.
	 */
	@Override
	public InProgressPage findInProgress(String keyPrefix, Duration olderThan, @Nullable String cursor, int limit) {
		Assert.isTrue(limit > 0, "limit must be positive");
		String prefix = keyPrefix + ":";
		long now = System.nanoTime();
		Instant wallNow = Instant.now();
		List<Map.Entry<String, MemoryEntry>> page = this.entries.entrySet()
			.stream()
			.filter((e) -> e.getValue().result() == null && !e.getValue().tombstone() && !e.getValue().isExpired(now)
					&& e.getKey().startsWith(prefix) && (cursor == null || e.getKey().compareTo(cursor) > 0))
			.sorted(Map.Entry.comparingByKey())
			.limit(limit)
			.toList();
		List<IdempotencyRecord> found = page.stream()
			.map((e) -> e.getValue().toRecord(new RecordKey(e.getKey()), now))
			.filter((record) -> record.age(wallNow) == null || record.age(wallNow).compareTo(olderThan) >= 0)
			.toList();
		return new InProgressPage(found, (page.size() == limit) ? page.get(limit - 1).getKey() : null);
	}

	@Override
	public boolean delete(RecordKey key) {
		boolean[] deleted = new boolean[1];
		long now = System.nanoTime();
		this.entries.computeIfPresent(key.value(), (k, entry) -> {
			deleted[0] = !entry.isExpired(now);
			changed(k, entry, null);
			return null;
		});
		return deleted[0];
	}

	@Override
	public Deletion deleteUnlessHeld(RecordKey key) {
		return deleteUnless(key, true);
	}

	@Override
	public Deletion deleteInProgress(RecordKey key) {
		return deleteUnless(key, false);
	}

	/**
	 * Deletes the live record of {@code key} if it is in progress ({@code inProgress}
	 * false) or completed (true), in one {@code compute}. A record in progress becomes a
	 * tombstone of its owner's token, so that the owner's renewal cannot write it anew.
	 */
	private Deletion deleteUnless(RecordKey key, boolean inProgress) {
		Deletion[] deletion = { Deletion.NONE };
		long now = System.nanoTime();
		this.entries.computeIfPresent(key.value(), (k, entry) -> {
			if (!entry.isExpired(now)) {
				if (entry.tombstone()) {
					return entry;
				}
				if ((entry.result() == null) == inProgress) {
					deletion[0] = inProgress ? Deletion.HELD : Deletion.COMPLETED;
					return entry;
				}
				deletion[0] = Deletion.DELETED;
				if (!inProgress) {
					return entry.fenced();
				}
			}
			else if (!inProgress && entry.result() == null && !isForgotten(entry, now)) {
				return entry;
			}
			changed(k, entry, null);
			return null;
		});
		return deletion[0];
	}

	/** Number of records held, expired ones included until they are swept. */
	public int size() {
		return this.entries.size();
	}

	private boolean update(RecordKey key, String token,
			BiFunction<@Nullable MemoryEntry, Long, @Nullable MemoryEntry> transition) {
		long now = System.nanoTime();
		boolean[] owned = new boolean[1];
		MemoryEntry written = this.entries.compute(key.value(), (k, entry) -> {
			if (entry == null || (entry.result() == null && !entry.tombstone() && token.equals(entry.token()))) {
				owned[0] = true;
				MemoryEntry next = transition.apply(entry, now);
				// In even when full, lest the result of a call that ran be lost.
				changed(k, entry, next);
				return next;
			}
			if (isForgotten(entry, now)) {
				changed(k, entry, null);
				return null;
			}
			return entry;
		});
		if (owned[0] && written != null) {
			written(written.expiresAt());
		}
		return owned[0];
	}

	/** Sweeps once as many claims as there were records at the last sweep have passed. */
	private void claiming() {
		if (this.claimsSinceSweep.incrementAndGet() < this.sweepAfter || !this.sweepLock.tryLock()) {
			return;
		}
		try {
			if (this.claimsSinceSweep.get() >= this.sweepAfter) {
				this.claimsSinceSweep.set(0);
				sweep(false);
				this.sweepAfter = Math.max(SWEEP_EVERY, this.entries.size());
			}
		}
		finally {
			this.sweepLock.unlock();
		}
	}

	/** Counts a new record in, unless it does not fit. */
	private void reserve(String key, MemoryEntry entry) {
		long size = sizeOf(key, entry);
		if (!take(this.recordCount, 1, this.maximumRecords)) {
			throw new InMemoryStoreFullException(this.maximumRecords, this.maximumBytes);
		}
		if (!take(this.usedBytes, size, this.maximumBytes)) {
			this.recordCount.decrementAndGet();
			throw new InMemoryStoreFullException(this.maximumRecords, this.maximumBytes);
		}
		if (hasQuota()) {
			boolean[] fits = new boolean[1];
			this.scopeBytes.compute(scopeOf(key), (scope, used) -> {
				long current = (used != null) ? used : 0;
				fits[0] = current + size <= this.maximumBytesPerScope;
				return fits[0] ? Long.valueOf(current + size) : used;
			});
			if (!fits[0]) {
				this.recordCount.decrementAndGet();
				this.usedBytes.addAndGet(-size);
				throw new InMemoryStoreFullException(scopeOf(key), this.maximumBytesPerScope);
			}
		}
	}

	private static boolean take(AtomicLong used, long amount, long maximum) {
		return used.getAndUpdate((current) -> (current + amount > maximum) ? current : current + amount)
				+ amount <= maximum;
	}

	/** {@code null} for no record. */
	private void changed(String key, @Nullable MemoryEntry before, @Nullable MemoryEntry after) {
		if ((before == null) != (after == null)) {
			this.recordCount.addAndGet((after != null) ? 1 : -1);
		}
		long bytes = sizeOf(key, after) - sizeOf(key, before);
		if (bytes != 0) {
			this.usedBytes.addAndGet(bytes);
			if (hasQuota()) {
				this.scopeBytes.merge(scopeOf(key), bytes, (used, delta) -> (used + delta != 0) ? used + delta : null);
			}
		}
	}

	private boolean hasQuota() {
		return this.maximumBytesPerScope < this.maximumBytes;
	}

	private static long sizeOf(String key, @Nullable MemoryEntry entry) {
		if (entry == null) {
			return 0;
		}
		long chars = key.length() + entry.token().length() + entry.fingerprint().value().length();
		return ENTRY_OVERHEAD + 2 * chars + ((entry.result() != null) ? entry.result().size() : 0);
	}

	/**
	 * The scope part of a record key; {@code "#"} for a hashed key, whose scope is
	 * unknown: such keys share one quota.
	 */
	private static String scopeOf(String key) {
		int keyStart = key.lastIndexOf(':');
		int nameStart = (keyStart > 0) ? key.lastIndexOf(':', keyStart - 1) : -1;
		if (nameStart < 0 || key.startsWith("#", nameStart + 1) && nameStart + 2 == keyStart) {
			return "#";
		}
		int scopeStart = key.lastIndexOf(':', nameStart - 1);
		return (scopeStart >= 0) ? key.substring(scopeStart + 1, nameStart) : "#";
	}

	// Called after the record is in the map, never inside compute: a sweep that starts
	// in between either sees the record or is lowered by this call after its reset.
	private void written(long expiresAt) {
		this.earliestExpiry.accumulateAndGet(expiresAt,
				(current, candidate) -> (candidate - current < 0) ? candidate : current);
	}

	/** A result past its TTL, or a call that never finished past its take-over memory. */
	private boolean isForgotten(MemoryEntry entry, long now) {
		return (entry.result() != null) ? entry.isExpired(now)
				: now - (entry.expiresAt() + this.takeoverMemoryNanos) >= 0;
	}

	private void sweepWhenFull() {
		if (System.nanoTime() - this.earliestExpiry.get() < 0) {
			return;
		}
		// Full: wait for one sweep rather than each run their own.
		this.sweepLock.lock();
		try {
			if (System.nanoTime() - this.earliestExpiry.get() >= 0) {
				sweep(true);
			}
		}
		finally {
			this.sweepLock.unlock();
		}
	}

	/**
	 * Removes what is forgotten or, when {@code full}, every expired record: a full store
	 * drops what it remembers of unfinished calls before it refuses a new key. Makes
	 * {@link #earliestExpiry} exact. Runs under {@link #sweepLock}.
	 */
	private void sweep(boolean full) {
		long now = System.nanoTime();
		this.earliestExpiry.set(now + NEVER);
		this.entries.forEach((key, entry) -> {
			if (entry.isExpired(now) && (full || isForgotten(entry, now)) && this.entries.remove(key, entry)) {
				changed(key, entry, null);
			}
			else {
				written(entry.expiresAt());
			}
		});
	}

	/**
	 * A record, or with {@code tombstone} the mark an operator's forced delete (or the
	 * release of a takeover) left of the owner it fenced; times are {@code nanoTime}.
	 */
	private record MemoryEntry(String token, Fingerprint fingerprint, @Nullable StoredResult result, long expiresAt,
			@Nullable Instant claimedAt, int attempt, boolean tombstone) {

		/** This record as the tombstone of its owner. */
		MemoryEntry fenced() {
			return new MemoryEntry(this.token, this.fingerprint, null, this.expiresAt, this.claimedAt, this.attempt,
					true);
		}

		boolean isExpired(long now) {
			return now - this.expiresAt >= 0;
		}

		IdempotencyRecord toRecord(RecordKey key, long now) {
			boolean inProgress = this.result == null;
			return new IdempotencyRecord(key,
					inProgress ? IdempotencyRecord.State.IN_PROGRESS : IdempotencyRecord.State.COMPLETED,
					this.fingerprint, inProgress ? this.claimedAt : null, Duration.ofNanos(this.expiresAt - now),
					this.result);
		}

	}

}
