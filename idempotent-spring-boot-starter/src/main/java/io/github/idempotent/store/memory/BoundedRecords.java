package io.github.idempotent.store.memory;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The records of an {@link InMemoryIdempotencyStore} within their bounds, and the sweeps
 * that drop the expired ones. Whoever changes {@link #entries} tells this class inside
 * the same {@code compute} ({@link #reserve}, {@link #changed}), then
 * {@link #written(long)} after it. Only a claim of a new key is refused for lack of room:
 * a result goes in regardless, so the bound can be exceeded by the results of the calls
 * running at once.
 */
final class BoundedRecords {

	private static final Log logger = LogFactory.getLog(InMemoryIdempotencyStore.class);

	static final int SWEEP_EVERY = 1024;

	// Far enough ahead of System.nanoTime() to stand for "never", near enough that the
	// difference of two such times cannot overflow.
	private static final long NEVER = Long.MAX_VALUE / 2;

	private static final long WARN_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

	final ConcurrentHashMap<String, MemoryEntry> entries = new ConcurrentHashMap<>();

	/** Estimated heap of a record besides its strings and its result. */
	static final int ENTRY_OVERHEAD = 200;

	private final int maximumRecords;

	private final long maximumBytes;

	private final long maximumBytesPerScope;

	private final long takeoverMemoryNanos;

	private final AtomicLong usedBytes = new AtomicLong();

	private final ConcurrentHashMap<String, Long> scopeBytes = new ConcurrentHashMap<>();

	// Counted apart from the map so that a claim can reserve a place atomically:
	// entries.size() read before an insert lets concurrent claims overshoot the bound.
	private final AtomicLong recordCount = new AtomicLong();

	// A lower bound on every expiry, made exact by every sweep: while it lies ahead, a
	// full store refuses new keys without scanning.
	private final AtomicLong earliestExpiry = new AtomicLong(System.nanoTime() + NEVER);

	private final AtomicInteger claimsSinceSweep = new AtomicInteger();

	private final ReentrantLock sweepLock = new ReentrantLock();

	private volatile int sweepAfter = SWEEP_EVERY;

	private final AtomicLong refusedSinceWarning = new AtomicLong();

	private final AtomicLong lastWarning = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);

	BoundedRecords(int maximumRecords, long maximumBytes, long maximumBytesPerScope, Duration takeoverMemory) {
		this.maximumRecords = maximumRecords;
		this.maximumBytes = maximumBytes;
		this.maximumBytesPerScope = maximumBytesPerScope;
		// Bounded so that expiresAt + memory cannot overflow past NEVER's margin.
		this.takeoverMemoryNanos = Math.min(takeoverMemory.toNanos(), NEVER / 4);
	}

	int size() {
		return this.entries.size();
	}

	/** Sweeps once as many claims as there were records at the last sweep have passed. */
	void claiming() {
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

	Room reserve(String key, MemoryEntry entry) {
		long size = sizeOf(key, entry);
		if (!take(this.recordCount, 1, this.maximumRecords)) {
			return Room.STORE_FULL;
		}
		if (!take(this.usedBytes, size, this.maximumBytes)) {
			this.recordCount.decrementAndGet();
			return Room.STORE_FULL;
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
				return Room.SCOPE_FULL;
			}
		}
		return Room.FITS;
	}

	private static boolean take(AtomicLong used, long amount, long maximum) {
		return used.getAndUpdate((current) -> (current + amount > maximum) ? current : current + amount)
				+ amount <= maximum;
	}

	/** {@code null} for no record. */
	void changed(String key, @Nullable MemoryEntry before, @Nullable MemoryEntry after) {
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

	static long sizeOf(String key, @Nullable MemoryEntry entry) {
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
	static String scopeOf(String key) {
		int keyStart = key.lastIndexOf(':');
		int nameStart = (keyStart > 0) ? key.lastIndexOf(':', keyStart - 1) : -1;
		if (nameStart < 0 || key.startsWith("#", nameStart + 1) && nameStart + 2 == keyStart) {
			return "#";
		}
		int scopeStart = key.lastIndexOf(':', nameStart - 1);
		return (scopeStart >= 0) ? key.substring(scopeStart + 1, nameStart) : "#";
	}

	enum Room {

		FITS, STORE_FULL, SCOPE_FULL

	}

	// Called after the record is in the map, never inside compute: a sweep that starts
	// in between either sees the record or is lowered by this call after its reset.
	void written(long expiresAt) {
		this.earliestExpiry.accumulateAndGet(expiresAt,
				(current, candidate) -> (candidate - current < 0) ? candidate : current);
	}

	/** A result past its TTL, or a call that never finished past its take-over memory. */
	boolean isForgotten(MemoryEntry entry, long now) {
		return (entry.result() != null) ? entry.isExpired(now)
				: now - (entry.expiresAt() + this.takeoverMemoryNanos) >= 0;
	}

	void sweepWhenFull() {
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

	InMemoryStoreFullException refuse(Room room, String key) {
		InMemoryStoreFullException ex = (room == Room.SCOPE_FULL)
				? new InMemoryStoreFullException(scopeOf(key), this.maximumBytesPerScope)
				: new InMemoryStoreFullException(this.maximumRecords, this.maximumBytes);
		// One warning a minute, with the count, rather than one per call.
		this.refusedSinceWarning.incrementAndGet();
		long now = System.nanoTime();
		long last = this.lastWarning.get();
		if (now - last >= WARN_EVERY_NANOS && this.lastWarning.compareAndSet(last, now)) {
			logger.warn(ex.getMessage() + ". New keys refused since the previous warning: "
					+ this.refusedSinceWarning.getAndSet(0));
		}
		return ex;
	}

}
