package io.github.idempotent.store.cache;

import java.time.Duration;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Ticker;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;
import org.springframework.util.unit.DataSize;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.StoredResult;

/**
 * The completed results this JVM holds, bounded by bytes, not by count: results range
 * from a few bytes to {@code max-result-size}.
 */
final class LocalResultCache {

	// The entry's objects and Caffeine's node, on a 64-bit JVM with compressed pointers.
	private static final int ENTRY_OVERHEAD = 160;

	private final long ttlNanos;

	private final Cache<String, Entry> entries;

	LocalResultCache(DataSize maximumSize, Duration ttl, Ticker ticker) {
		Assert.isTrue(maximumSize != null && maximumSize.toBytes() > 0, "maximumSize must be positive");
		Assert.isTrue(ttl != null && !ttl.isNegative() && !ttl.isZero(), "ttl must be positive");
		this.ttlNanos = ttl.toNanos();
		this.entries = Caffeine.newBuilder()
			.maximumWeight(maximumSize.toBytes())
			.weigher(LocalResultCache::weigh)
			.expireAfter(new EntryExpiry())
			.ticker(ticker)
			.build();
	}

	private static int weigh(String key, Entry entry) {
		// Two bytes a character: an upper bound, whatever the strings' coding.
		long bytes = ENTRY_OVERHEAD + 2L * (key.length() + entry.fingerprint().value().length())
				+ entry.result().bytes().length;
		return (int) Math.min(Integer.MAX_VALUE, bytes);
	}

	@Nullable Entry get(String key) {
		return this.entries.getIfPresent(key);
	}

	/** For the cache's TTL, or {@code timeToLive} if shorter. */
	Entry put(String key, Fingerprint fingerprint, StoredResult result, @Nullable Duration timeToLive) {
		long ttlNanos = (timeToLive != null) ? Math.min(this.ttlNanos, timeToLive.toNanos()) : this.ttlNanos;
		Entry entry = new Entry(fingerprint, result, ttlNanos);
		this.entries.put(key, entry);
		return entry;
	}

	/** Drops the entry of {@code key} if it is still {@code entry}. */
	void remove(String key, Entry entry) {
		this.entries.asMap().remove(key, entry);
	}

	void invalidate(String key) {
		this.entries.invalidate(key);
	}

	void invalidateAll() {
		this.entries.invalidateAll();
	}

	long estimatedSize() {
		return this.entries.estimatedSize();
	}

	long weightedSize() {
		this.entries.cleanUp();
		return this.entries.policy().eviction().orElseThrow().weightedSize().orElse(0);
	}

	record Entry(Fingerprint fingerprint, StoredResult result, long ttlNanos) {
	}

	/** Each entry expires its own time after it was written; reads do not extend it. */
	private static final class EntryExpiry implements Expiry<String, Entry> {

		@Override
		public long expireAfterCreate(String key, Entry entry, long currentTime) {
			return entry.ttlNanos();
		}

		@Override
		public long expireAfterUpdate(String key, Entry entry, long currentTime, long currentDuration) {
			return entry.ttlNanos();
		}

		@Override
		public long expireAfterRead(String key, Entry entry, long currentTime, long currentDuration) {
			return currentDuration;
		}

	}

}
