package io.github.idempotent.store.memory;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
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
 * {@value #SWEEP_EVERY}), so sweeping costs a constant amount per claim however many
 * records are held.
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

	private static final Log logger = LogFactory.getLog(InMemoryIdempotencyStore.class);

	/**
	 * How long after its lease ran out a call that never finished is remembered by
	 * default: as long as results are kept by default.
	 */
	public static final Duration DEFAULT_TAKEOVER_MEMORY = Duration.ofHours(24);

	private static final int SWEEP_EVERY = 1024;

	// Far enough ahead of System.nanoTime() to stand for "never", near enough that the
	// difference of two such times cannot overflow.
	private static final long NEVER = Long.MAX_VALUE / 2;

	private static final long WARN_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

	private final int maximumRecords;

	private final long takeoverMemoryNanos;

	private final ConcurrentHashMap<String, Entry> records = new ConcurrentHashMap<>();

	// Counted apart from the map so that a claim can reserve a place atomically:
	// records.size() read before an insert lets concurrent claims overshoot the bound.
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
		this.maximumRecords = maximumRecords;
		// Bounded so that expiresAt + memory cannot overflow past NEVER's margin.
		this.takeoverMemoryNanos = Math.min(takeoverMemory.toNanos(), NEVER / 4);
	}

	@Override
	public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
		if (this.claimsSinceSweep.incrementAndGet() >= this.sweepAfter) {
			sweepIfDue();
		}
		ClaimResult result = tryClaim(key, fingerprint, lease);
		if (result == null) {
			sweepWhenFull();
			result = tryClaim(key, fingerprint, lease);
			if (result == null) {
				InMemoryStoreFullException ex = new InMemoryStoreFullException(this.maximumRecords);
				refused(ex);
				throw ex;
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
		Entry written = this.records.compute(key.value(), (k, entry) -> {
			if (entry != null && !entry.isExpired(now) && !entry.tombstone()) {
				result[0] = (entry.result != null) ? new ClaimResult.Completed(entry.fingerprint, entry.result)
						: new ClaimResult.InProgress(entry.fingerprint, Duration.ofNanos(entry.expiresAt - now));
				return entry;
			}
			// An expired record is replaced in place; only an absent key needs room.
			if (entry == null && !reserveRecord()) {
				return null;
			}
			String token = OwnerToken.generate();
			// A placeholder past its lease, or a tombstone, is a call that never
			// finished:
			// this claim is the attempt after it. An expired result, or a key released
			// by the owner of a first attempt (gone from the map), starts again at 1; a
			// released takeover left a tombstone.
			if (entry != null && entry.result == null && !isForgotten(entry, now)) {
				int attempt = (entry.attempt < Integer.MAX_VALUE) ? entry.attempt + 1 : entry.attempt;
				result[0] = new ClaimResult.Acquired(token, attempt,
						(entry.claimedAt != null) ? entry.claimedAt.truncatedTo(ChronoUnit.SECONDS) : null);
				return new Entry(token, fingerprint, null, now + lease.toNanos(), Instant.now(), attempt, false);
			}
			result[0] = new ClaimResult.Acquired(token);
			return new Entry(token, fingerprint, null, now + lease.toNanos(), Instant.now(), 1, false);
		});
		if (result[0] instanceof ClaimResult.Acquired && written != null) {
			lowerEarliestExpiry(written.expiresAt);
		}
		return result[0];
	}

	@Override
	public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result, Duration ttl) {
		if (update(key, token,
				(entry, now) -> new Entry(token, fingerprint, result, now + ttl.toNanos(), null, 1, false))) {
			return true;
		}
		// The same completion again (the executor repeats one whose outcome it could not
		// confirm) finds the very record it would write: a completed record keeps its
		// owner's token for this.
		Entry entry = this.records.get(key.value());
		return entry != null && entry.result != null && token.equals(entry.token)
				&& fingerprint.equals(entry.fingerprint) && result.equals(entry.result);
	}

	@Override
	public boolean release(RecordKey key, String token) {
		// A released takeover becomes a tombstone, as with a forced delete, rather than
		// going: the next claim must still know it takes over a call that never finished
		// (the attempts before this one), not run as attempt 1 and repeat what they did.
		return update(key, token, (entry, now) -> (entry != null && entry.attempt() > 1) ? new Entry(entry.token(),
				entry.fingerprint(), null, entry.expiresAt(), entry.claimedAt(), entry.attempt(), true) : null);
	}

	@Override
	public boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease) {
		if (update(key, token,
				(entry, now) -> (entry != null)
						? new Entry(token, fingerprint, null, now + lease.toNanos(), entry.claimedAt, entry.attempt,
								false)
						: new Entry(token, fingerprint, null, now + lease.toNanos(), Instant.now(), 1, false))) {
			return true;
		}
		// Completed by this owner (a completion repeated because its outcome was unknown
		// landed the first time): still its own, nothing to extend.
		Entry entry = this.records.get(key.value());
		return entry != null && entry.result != null && token.equals(entry.token);
	}

	@Override
	public Optional<IdempotencyRecord> inspect(RecordKey key) {
		Entry entry = this.records.get(key.value());
		long now = System.nanoTime();
		return (entry != null && !entry.isExpired(now) && !entry.tombstone()) ? Optional.of(entry.toRecord(key, now))
				: Optional.empty();
	}

	/**
	 * The records in progress in key order, {@code limit} at a time: the cursor is the
	 * last key of the previous page. Walks every record, as a store for one JVM may.
	 */
	@Override
	public InProgressPage findInProgress(String keyPrefix, Duration olderThan, @Nullable String cursor, int limit) {
		Assert.isTrue(limit > 0, "limit must be positive");
		String prefix = keyPrefix + ":";
		long now = System.nanoTime();
		Instant wallNow = Instant.now();
		List<Map.Entry<String, Entry>> page = this.records.entrySet()
			.stream()
			.filter((e) -> e.getValue().result == null && !e.getValue().tombstone() && !e.getValue().isExpired(now)
					&& e.getKey().startsWith(prefix) && (cursor == null || e.getKey().compareTo(cursor) > 0))
			.sorted(Map.Entry.comparingByKey())
			.limit(limit)
			.toList();
		List<IdempotencyRecord> records = new ArrayList<>();
		for (Map.Entry<String, Entry> e : page) {
			IdempotencyRecord record = e.getValue().toRecord(new RecordKey(e.getKey()), now);
			Duration age = record.age(wallNow);
			if (age == null || age.compareTo(olderThan) >= 0) {
				records.add(record);
			}
		}
		return new InProgressPage(records, (page.size() == limit) ? page.get(limit - 1).getKey() : null);
	}

	@Override
	public boolean delete(RecordKey key) {
		boolean[] deleted = new boolean[1];
		long now = System.nanoTime();
		this.records.computeIfPresent(key.value(), (k, entry) -> {
			deleted[0] = !entry.isExpired(now);
			this.recordCount.decrementAndGet();
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
	 * false) or completed ({@code inProgress} true), in one {@code compute}; an expired
	 * one is reported as none, and goes unless it is a call that never finished that a
	 * forced delete would only replace by what it is already (a record a claim takes
	 * over). A record in progress is replaced by a tombstone of its owner's token: its
	 * owner, if alive, renews within a third of the lease and would otherwise write the
	 * vanished record anew, undoing the deletion; the tombstone makes that renewal and
	 * its completion fail, and a claim takes it as free, as the attempt after it. A live
	 * tombstone is no record, and stays.
	 */
	private Deletion deleteUnless(RecordKey key, boolean inProgress) {
		Deletion[] deletion = { Deletion.NONE };
		long now = System.nanoTime();
		this.records.computeIfPresent(key.value(), (k, entry) -> {
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
					return new Entry(entry.token(), entry.fingerprint(), null, entry.expiresAt(), entry.claimedAt(),
							entry.attempt(), true);
				}
			}
			else if (!inProgress && entry.result() == null && !isForgotten(entry, now)) {
				return entry;
			}
			this.recordCount.decrementAndGet();
			return null;
		});
		return deletion[0];
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
		Entry written = this.records.compute(key.value(), (k, entry) -> {
			if (entry == null || (entry.result == null && !entry.tombstone() && token.equals(entry.token))) {
				owned[0] = true;
				Entry next = transition.apply(entry, now);
				if (entry == null && next != null) {
					// A vanished record written anew goes in even when the store is full:
					// refusing would drop the result of a call that ran, and a retry
					// would run it again. Such records number at most the calls running
					// at once.
					this.recordCount.incrementAndGet();
				}
				else if (entry != null && next == null) {
					this.recordCount.decrementAndGet();
				}
				return next;
			}
			if (isForgotten(entry, now)) {
				this.recordCount.decrementAndGet();
				return null;
			}
			return entry;
		});
		if (owned[0] && written != null) {
			lowerEarliestExpiry(written.expiresAt);
		}
		return owned[0];
	}

	private boolean reserveRecord() {
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

	// Called after the record is in the map, never inside compute: a sweep that starts
	// in between either sees the record or is lowered by this call after its reset.
	private void lowerEarliestExpiry(long expiresAt) {
		this.earliestExpiry.accumulateAndGet(expiresAt,
				(current, candidate) -> (candidate - current < 0) ? candidate : current);
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
				this.sweepAfter = Math.max(SWEEP_EVERY, this.records.size());
			}
		}
		finally {
			this.sweepLock.unlock();
		}
	}

	private void sweepWhenFull() {
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
		this.records.forEach((key, entry) -> {
			if (entry.isExpired(now) && (full || isForgotten(entry, now)) && this.records.remove(key, entry)) {
				this.recordCount.decrementAndGet();
			}
			else {
				lowerEarliestExpiry(entry.expiresAt);
			}
		});
	}

	/**
	 * Whether nothing of {@code entry} is worth keeping at {@code now}: a result past its
	 * TTL, or a call that never finished past its take-over memory.
	 */
	private boolean isForgotten(Entry entry, long now) {
		return (entry.result != null) ? entry.isExpired(now) : now - (entry.expiresAt + this.takeoverMemoryNanos) >= 0;
	}

	private void refused(InMemoryStoreFullException ex) {
		// A full store refuses every new key until records expire: one warning a minute,
		// with the count, rather than one per call.
		this.refusedSinceWarning.incrementAndGet();
		long now = System.nanoTime();
		long last = this.lastWarning.get();
		if (now - last >= WARN_EVERY_NANOS && this.lastWarning.compareAndSet(last, now)) {
			logger.warn(ex.getMessage() + ". New keys refused since the previous warning: "
					+ this.refusedSinceWarning.getAndSet(0));
		}
	}

	@FunctionalInterface
	private interface Transition {

		@Nullable Entry apply(@Nullable Entry entry, long now);

	}

	/**
	 * A record, or with {@code tombstone} the mark an operator's forced delete (or the
	 * release of a takeover) left of the owner it fenced.
	 */
	private record Entry(String token, Fingerprint fingerprint, StoredResult result, long expiresAt,
			@Nullable Instant claimedAt, int attempt, boolean tombstone) {

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
