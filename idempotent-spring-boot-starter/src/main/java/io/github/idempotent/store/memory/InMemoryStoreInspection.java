package io.github.idempotent.store.memory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.InspectableIdempotencyStore.Deletion;
import io.github.idempotent.store.InspectableIdempotencyStore.InProgressPage;
import io.github.idempotent.store.RecordKey;

/**
 * What an operator sees and does through the Actuator on an
 * {@link InMemoryIdempotencyStore}.
 */
final class InMemoryStoreInspection {

	private final BoundedRecords records;

	InMemoryStoreInspection(BoundedRecords records) {
		this.records = records;
	}

	Optional<IdempotencyRecord> inspect(RecordKey key) {
		MemoryEntry entry = this.records.entries.get(key.value());
		long now = System.nanoTime();
		return (entry != null && !entry.isExpired(now) && !entry.tombstone()) ? Optional.of(entry.toRecord(key, now))
				: Optional.empty();
	}

	/**
	 * Key order, {@code limit} at a time; walks every record, as a store for one JVM may.
	 */
	InProgressPage findInProgress(String keyPrefix, Duration olderThan, @Nullable String cursor, int limit) {
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
		List<IdempotencyRecord> found = new ArrayList<>();
		for (Map.Entry<String, MemoryEntry> e : page) {
			IdempotencyRecord record = e.getValue().toRecord(new RecordKey(e.getKey()), now);
			Duration age = record.age(wallNow);
			if (age == null || age.compareTo(olderThan) >= 0) {
				found.add(record);
			}
		}
		return new InProgressPage(found, (page.size() == limit) ? page.get(limit - 1).getKey() : null);
	}

	boolean delete(RecordKey key) {
		boolean[] deleted = new boolean[1];
		long now = System.nanoTime();
		this.records.entries.computeIfPresent(key.value(), (k, entry) -> {
			deleted[0] = !entry.isExpired(now);
			this.records.removed(k, entry);
			return null;
		});
		return deleted[0];
	}

	Deletion deleteUnlessHeld(RecordKey key) {
		return deleteUnless(key, true);
	}

	Deletion deleteInProgress(RecordKey key) {
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
					MemoryEntry tombstone = new MemoryEntry(entry.token(), entry.fingerprint(), null, entry.expiresAt(),
							entry.claimedAt(), entry.attempt(), true);
					this.records.replaced(k, entry, tombstone);
					return tombstone;
				}
			}
			else if (!inProgress && entry.result() == null && !this.records.isForgotten(entry, now)) {
				return entry;
			}
			this.records.removed(k, entry);
			return null;
		});
		return deletion[0];
	}

}
