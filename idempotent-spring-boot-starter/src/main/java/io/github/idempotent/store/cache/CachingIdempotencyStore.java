package io.github.idempotent.store.cache;

import java.time.Duration;
import java.util.Optional;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Ticker;

import org.jspecify.annotations.Nullable;

import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.util.Assert;
import org.springframework.util.ClassUtils;
import org.springframework.util.unit.DataSize;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyKey;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.InspectableIdempotencyStore;
import io.github.idempotent.store.StoredResult;

/**
 * Keeps completed results in a bounded local cache in front of another store, so that a
 * replay of a hot key is answered from this JVM's memory without a round trip.
 * <p>
 * Only completed results are cached: a claim that finds a key in progress, or acquires
 * it, always goes to the store, so the store alone still decides who runs a call. A
 * result enters the cache when this instance completes it (write-through: the store's
 * {@code complete} comes first) or when a claim reads it from the store. The cached
 * fingerprint goes back to the executor with the result, so a different payload under the
 * same key is still refused.
 * <p>
 * The trade-off: a cached result is replayed until its cache entry expires even if the
 * record leaves the store earlier (deleted by hand, or evicted by Redis under memory
 * pressure). An entry lives at most {@code ttl}, and an entry written through lives no
 * longer than the record's own TTL; an entry read from the store cannot know how long its
 * record has left, so {@code ttl} should be no longer than the shortest TTL of the
 * methods that use the store.
 * <p>
 * The cache is bounded by bytes, not by a number of results: results range from a few
 * bytes to {@code max-result-size}, so a count says nothing about the heap it takes. Each
 * entry weighs its result, key and fingerprint plus a fixed estimate of the objects
 * around them.
 */
public class CachingIdempotencyStore implements InspectableIdempotencyStore {

	// Object headers and fields of the entry, its fingerprint, result and their arrays,
	// and Caffeine's node: about 160 bytes on a 64-bit JVM with compressed pointers.
	private static final int ENTRY_OVERHEAD = 160;

	private static final boolean TRANSACTIONS_PRESENT = ClassUtils.isPresent(
			"org.springframework.transaction.support.TransactionSynchronizationManager",
			CachingIdempotencyStore.class.getClassLoader());

	private final IdempotencyStore delegate;

	private final long ttlNanos;

	private final boolean writeThrough;

	private final Cache<String, Entry> completed;

	/**
	 * @param maximumSize largest total size of the cached results (with their keys)
	 */
	public CachingIdempotencyStore(IdempotencyStore delegate, DataSize maximumSize, Duration ttl) {
		this(delegate, maximumSize, ttl, true);
	}

	/**
	 * @param maximumSize largest total size of the cached results (with their keys)
	 * @param writeThrough whether a result this instance completes is cached at once;
	 * {@code false} when the store's {@code complete} joins the caller's transaction,
	 * which may still roll back
	 */
	public CachingIdempotencyStore(IdempotencyStore delegate, DataSize maximumSize, Duration ttl,
			boolean writeThrough) {
		this(delegate, maximumSize, ttl, writeThrough, Ticker.systemTicker());
	}

	CachingIdempotencyStore(IdempotencyStore delegate, DataSize maximumSize, Duration ttl, boolean writeThrough,
			Ticker ticker) {
		Assert.notNull(delegate, "delegate must not be null");
		Assert.isTrue(maximumSize != null && maximumSize.toBytes() > 0, "maximumSize must be positive");
		Assert.isTrue(ttl != null && !ttl.isNegative() && !ttl.isZero(), "ttl must be positive");
		this.delegate = delegate;
		this.ttlNanos = ttl.toNanos();
		this.writeThrough = writeThrough;
		this.completed = Caffeine.newBuilder()
			.maximumWeight(maximumSize.toBytes())
			.weigher(CachingIdempotencyStore::weigh)
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

	@Override
	public ClaimResult claim(IdempotencyKey key, Fingerprint fingerprint, Duration lease) {
		Entry cached = this.completed.getIfPresent(key.value());
		if (cached != null) {
			return new ClaimResult.Completed(cached.fingerprint(), cached.result());
		}
		ClaimResult claim = this.delegate.claim(key, fingerprint, lease);
		if (claim instanceof ClaimResult.Completed completed && (this.writeThrough || !inTransaction())) {
			this.completed.put(key.value(), new Entry(completed.fingerprint(), completed.result(), this.ttlNanos));
		}
		return claim;
	}

	@Override
	public boolean complete(IdempotencyKey key, String token, Fingerprint fingerprint, StoredResult result,
			Duration ttl) {
		boolean completed = this.delegate.complete(key, token, fingerprint, result, ttl);
		if (completed && this.writeThrough) {
			this.completed.put(key.value(), new Entry(fingerprint, result, Math.min(this.ttlNanos, ttl.toNanos())));
		}
		return completed;
	}

	@Override
	public boolean release(IdempotencyKey key, String token) {
		return this.delegate.release(key, token);
	}

	@Override
	public boolean renew(IdempotencyKey key, String token, Fingerprint fingerprint, Duration lease) {
		return this.delegate.renew(key, token, fingerprint, lease);
	}

	@Override
	public int maxKeyLength() {
		return this.delegate.maxKeyLength();
	}

	/**
	 * The record as the store behind the cache holds it.
	 */
	@Override
	public Optional<IdempotencyRecord> inspect(IdempotencyKey key) {
		return inspectableDelegate().inspect(key);
	}

	@Override
	public InProgressPage findInProgress(String keyPrefix, Duration olderThan, @Nullable String cursor, int limit) {
		return inspectableDelegate().findInProgress(keyPrefix, olderThan, cursor, limit);
	}

	/**
	 * Deletes the record from the store and this instance's cache; other instances'
	 * caches keep replaying it until their entries expire.
	 */
	@Override
	public boolean delete(IdempotencyKey key) {
		boolean deleted = inspectableDelegate().delete(key);
		this.completed.invalidate(key.value());
		return deleted;
	}

	/**
	 * Whether the store behind the cache can be inspected.
	 */
	public boolean isInspectable() {
		return this.delegate instanceof InspectableIdempotencyStore;
	}

	private InspectableIdempotencyStore inspectableDelegate() {
		if (this.delegate instanceof InspectableIdempotencyStore inspectable) {
			return inspectable;
		}
		throw new UnsupportedOperationException(
				this.delegate.getClass().getName() + " does not implement InspectableIdempotencyStore");
	}

	/**
	 * Whether the calling thread is in a transaction: without write-through, a store that
	 * joins transactions may answer a claim in one with a result its transaction has not
	 * committed yet (and may still roll back).
	 */
	private static boolean inTransaction() {
		return TRANSACTIONS_PRESENT && TransactionSynchronizationManager.isActualTransactionActive();
	}

	public IdempotencyStore getDelegate() {
		return this.delegate;
	}

	public boolean isWriteThrough() {
		return this.writeThrough;
	}

	/**
	 * Number of cached results (an estimate, as Caffeine gives it).
	 */
	public long cachedResults() {
		return this.completed.estimatedSize();
	}

	/**
	 * Estimated total size of the cached results, in bytes, once pending evictions are
	 * done.
	 */
	public long cachedBytes() {
		this.completed.cleanUp();
		return this.completed.policy().eviction().orElseThrow().weightedSize().orElse(0);
	}

	/**
	 * Drops every cached result; the store is untouched.
	 */
	public void clear() {
		this.completed.invalidateAll();
	}

	private record Entry(Fingerprint fingerprint, StoredResult result, long ttlNanos) {
	}

	/**
	 * Each entry expires its own time after it was written; reads do not extend it.
	 */
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
