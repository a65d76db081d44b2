package io.github.idempotent.store.memory;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
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
 * estimated heap and optionally per scope; it never evicts a live record, which would let
 * a retry run the method again, but refuses new keys with
 * {@link InMemoryStoreFullException}.
 */
public class InMemoryIdempotencyStore implements InspectableIdempotencyStore {

	/** Records held by default: with results of about 1 KB, about 100 MB of heap. */
	public static final int DEFAULT_MAXIMUM_RECORDS = 100_000;

	/** Estimated bytes of heap held by default. */
	public static final long DEFAULT_MAXIMUM_BYTES = 100L * 1024 * 1024;

	/** Default of the take-over memory. */
	public static final Duration DEFAULT_TAKEOVER_MEMORY = Duration.ofHours(24);

	private final BoundedRecords records;

	/**
	 * Store of {@value #DEFAULT_MAXIMUM_RECORDS} records and
	 * {@value #DEFAULT_MAXIMUM_BYTES} bytes at most.
	 */
	public InMemoryIdempotencyStore() {
		this(DEFAULT_MAXIMUM_RECORDS);
	}

	/**
	 * @param maximumRecords records held at most, expired ones not yet swept included
	 */
	public InMemoryIdempotencyStore(int maximumRecords) {
		this(maximumRecords, DEFAULT_TAKEOVER_MEMORY);
	}

	/**
	 * @param maximumRecords records held at most, expired ones not yet swept included
	 * @param takeoverMemory how long a placeholder whose lease ran out is kept
	 */
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
		this.records = new BoundedRecords(maximumRecords, maximumBytes, maximumBytesPerScope, takeoverMemory);
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
	 * {@code null} if the key is absent and there is no room ({@code room} says which).
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
			// A placeholder past its lease, or a tombstone: this claim takes it over.
			boolean takeover = entry != null && entry.result() == null && !this.records.isForgotten(entry, now);
			int attempt = !takeover ? 1 : (entry.attempt() < Integer.MAX_VALUE) ? entry.attempt() + 1 : entry.attempt();
			String token = OwnerToken.generate();
			MemoryEntry next = new MemoryEntry(token, fingerprint, null, now + lease.toNanos(), Instant.now(), attempt,
					false);
			if (entry == null) {
				room[0] = this.records.reserve(k, next);
				if (room[0] != BoundedRecords.Room.FITS) {
					return null;
				}
			}
			else {
				this.records.changed(k, entry, next);
			}
			result[0] = new ClaimResult.Acquired(token, attempt,
					(takeover && entry.claimedAt() != null) ? entry.claimedAt().truncatedTo(ChronoUnit.SECONDS) : null);
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
		MemoryEntry entry = this.records.entries.get(key.value());
		return entry != null && entry.result() != null && token.equals(entry.token())
				&& fingerprint.equals(entry.fingerprint()) && result.equals(entry.result());
	}

	@Override
	public boolean release(RecordKey key, String token) {
		// A released takeover becomes a tombstone, so the next claim still knows it takes
		// over a call that never finished.
		return update(key, token, (entry, now) -> (entry != null && entry.attempt() > 1) ? entry.fenced() : null);
	}

	@Override
	public boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease) {
		if (update(key, token, (entry, now) -> new MemoryEntry(token, fingerprint, null, now + lease.toNanos(),
				(entry != null) ? entry.claimedAt() : Instant.now(), (entry != null) ? entry.attempt() : 1, false))) {
			return true;
		}
		MemoryEntry entry = this.records.entries.get(key.value());
		return entry != null && entry.result() != null && token.equals(entry.token());
	}

	@Override
	public Optional<IdempotencyRecord> inspect(RecordKey key) {
		MemoryEntry entry = this.records.entries.get(key.value());
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
		List<Map.Entry<String, MemoryEntry>> page = this.records.entries.entrySet()
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
		this.records.entries.computeIfPresent(key.value(), (k, entry) -> {
			deleted[0] = !entry.isExpired(now);
			this.records.changed(k, entry, null);
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
		this.records.entries.computeIfPresent(key.value(), (k, entry) -> {
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
					MemoryEntry tombstone = entry.fenced();
					this.records.changed(k, entry, tombstone);
					return tombstone;
				}
			}
			else if (!inProgress && entry.result() == null && !this.records.isForgotten(entry, now)) {
				return entry;
			}
			this.records.changed(k, entry, null);
			return null;
		});
		return deletion[0];
	}

	/** Number of records held, expired ones included until they are swept. */
	public int size() {
		return this.records.size();
	}

	private boolean update(RecordKey key, String token,
			BiFunction<@Nullable MemoryEntry, Long, @Nullable MemoryEntry> transition) {
		long now = System.nanoTime();
		boolean[] owned = new boolean[1];
		MemoryEntry written = this.records.entries.compute(key.value(), (k, entry) -> {
			if (entry == null || (entry.result() == null && !entry.tombstone() && token.equals(entry.token()))) {
				owned[0] = true;
				MemoryEntry next = transition.apply(entry, now);
				// In even when full, lest the result of a call that ran be lost.
				this.records.changed(k, entry, next);
				return next;
			}
			if (this.records.isForgotten(entry, now)) {
				this.records.changed(k, entry, null);
				return null;
			}
			return entry;
		});
		if (owned[0] && written != null) {
			this.records.written(written.expiresAt());
		}
		return owned[0];
	}

}
