package io.github.idempotent.store.memory;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The records of an {@link InMemoryIdempotencyStore}, at most {@code maximumRecords} of
 * them, and the sweeps that drop the expired ones: every so many claims (see the store),
 * and when a claim of a new key finds the store full.
 * <p>
 * Whoever adds a record to {@link #entries} or removes one tells this class, inside the
 * same {@code compute}: {@link #reserve()} for a new key (which fails when full),
 * {@link #added()} for a record that goes in regardless, {@link #removed()}; and, after
 * the {@code compute}, {@link #written(long)} with its expiry.
 */
final class BoundedRecords {

	// The store's category: a full store is the store's doing.
	private static final Log logger = LogFactory.getLog(InMemoryIdempotencyStore.class);

	static final int SWEEP_EVERY = 1024;

	// Far enough ahead of System.nanoTime() to stand for "never", near enough that the
	// difference of two such times cannot overflow.
	private static final long NEVER = Long.MAX_VALUE / 2;

	private static final long WARN_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

	final ConcurrentHashMap<String, MemoryEntry> entries = new ConcurrentHashMap<>();

	private final int maximumRecords;

	private final long takeoverMemoryNanos;

	// Counted apart from the map so that a claim can reserve a place atomically:
	// entries.size() read before an insert lets concurrent claims overshoot the bound.
	private final AtomicInteger recordCount = new AtomicInteger();

	// No record expires before this System.nanoTime(). A lower bound, lowered by every
	// write and made exact by every sweep: while it lies ahead, a full store has nothing
	// to sweep, and a flood of new keys is refused without scanning every record each.
	private final AtomicLong earliestExpiry = new AtomicLong(System.nanoTime() + NEVER);

	private final AtomicInteger claimsSinceSweep = new AtomicInteger();

	private final ReentrantLock sweepLock = new ReentrantLock();

	private volatile int sweepAfter = SWEEP_EVERY;

	private final AtomicLong refusedSinceWarning = new AtomicLong();

	private final AtomicLong lastWarning = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);

	BoundedRecords(int maximumRecords, Duration takeoverMemory) {
		this.maximumRecords = maximumRecords;
		// Bounded so that expiresAt + memory cannot overflow past NEVER's margin.
		this.takeoverMemoryNanos = Math.min(takeoverMemory.toNanos(), NEVER / 4);
	}

	int size() {
		return this.entries.size();
	}

	/**
	 * Counts a claim, and sweeps when as many claims as there were records at the last
	 * sweep have passed.
	 */
	void claiming() {
		if (this.claimsSinceSweep.incrementAndGet() >= this.sweepAfter) {
			sweepIfDue();
		}
	}

	/**
	 * Takes a place for a new key, unless the store is full.
	 */
	boolean reserve() {
		while (true) {
			int count = this.recordCount.get();
			if (count >= this.maximumRecords) {
				return false;
			}
			if (this.recordCount.compareAndSet(count, count + 1)) {
				return true;
			}
		}
	}

	/**
	 * Counts a record that goes in whether or not the store is full.
	 */
	void added() {
		this.recordCount.incrementAndGet();
	}

	void removed() {
		this.recordCount.decrementAndGet();
	}

	// Called after the record is in the map, never inside compute: a sweep that starts
	// in between either sees the record or is lowered by this call after its reset.
	void written(long expiresAt) {
		this.earliestExpiry.accumulateAndGet(expiresAt,
				(current, candidate) -> (candidate - current < 0) ? candidate : current);
	}

	/**
	 * Whether nothing of {@code entry} is worth keeping at {@code now}: a result past its
	 * TTL, or a call that never finished past its take-over memory.
	 */
	boolean isForgotten(MemoryEntry entry, long now) {
		return (entry.result() != null) ? entry.isExpired(now)
				: now - (entry.expiresAt() + this.takeoverMemoryNanos) >= 0;
	}

	private void sweepIfDue() {
		// One caller sweeps; the others carry on.
		if (!this.sweepLock.tryLock()) {
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

	void sweepWhenFull() {
		if (System.nanoTime() - this.earliestExpiry.get() < 0) {
			return;
		}
		// Claims that find the store full wait for one sweep rather than each run their
		// own; after it, the bound is exact and tells whether another would free
		// anything.
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
	 * Removes the expired results and the calls that never finished whose take-over
	 * memory has passed, or, when {@code full}, every expired record: a full store drops
	 * what it remembers of unfinished calls before it refuses a new key. Makes
	 * {@link #earliestExpiry} exact: the expiry of the records it keeps, those it
	 * remembers past their lease included, so that a full store finds them. Runs under
	 * {@link #sweepLock}.
	 */
	private void sweep(boolean full) {
		long now = System.nanoTime();
		this.earliestExpiry.set(now + NEVER);
		this.entries.forEach((key, entry) -> {
			if (entry.isExpired(now) && (full || isForgotten(entry, now)) && this.entries.remove(key, entry)) {
				this.recordCount.decrementAndGet();
			}
			else {
				written(entry.expiresAt());
			}
		});
	}

	/**
	 * The failure of a claim of a new key that found the store full, even after a sweep.
	 */
	InMemoryStoreFullException refuse() {
		InMemoryStoreFullException ex = new InMemoryStoreFullException(this.maximumRecords);
		// A full store refuses every new key until records expire: one warning a minute,
		// with the count, rather than one per call.
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
