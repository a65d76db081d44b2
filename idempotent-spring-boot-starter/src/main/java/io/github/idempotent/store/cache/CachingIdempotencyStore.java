package io.github.idempotent.store.cache;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

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
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.AsyncIdempotencyStore;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.InspectableIdempotencyStore;
import io.github.idempotent.store.RecordTracking;
import io.github.idempotent.store.StoredResult;

/**
 * Keeps completed results in a local cache bounded by bytes in front of another store, so
 * that a replay of a hot key costs no round trip; the store alone still decides who runs
 * a call. With {@link RecordTracking} (the Redis store's), the store reports every change
 * of a cached record, and the cache is bypassed while the tracker is not current. Without
 * it, a cached result is replayed until its entry expires, even if the record leaves the
 * store earlier, so {@code ttl} should be no longer than the shortest TTL of the methods
 * that use the store. See docs/stores.md.
 */
public class CachingIdempotencyStore implements AsyncIdempotencyStore, InspectableIdempotencyStore, AutoCloseable {

	private static final boolean TRANSACTIONS_PRESENT = ClassUtils.isPresent(
			"org.springframework.transaction.support.TransactionSynchronizationManager",
			CachingIdempotencyStore.class.getClassLoader());

	// An entry's objects and Caffeine's node, on a 64-bit JVM with compressed pointers.
	private static final int ENTRY_OVERHEAD = 160;

	private final IdempotencyStore delegate;

	private final boolean writeThrough;

	private final Duration ttl;

	/** Bounded by bytes: results range from a few bytes to {@code max-result-size}. */
	private final Cache<String, Entry> completed;

	private final @Nullable RecordTracking tracking;

	/** Counts the tracker's reports (see {@link #fill}). */
	private final AtomicLong invalidations = new AtomicLong();

	private final Set<String> filling = ConcurrentHashMap.newKeySet();

	/** A cache bounded by its TTL only. */
	public CachingIdempotencyStore(IdempotencyStore delegate, DataSize maximumSize, Duration ttl) {
		this(delegate, maximumSize, ttl, true);
	}

	/**
	 * @param writeThrough whether a result this instance completes is cached at once;
	 * {@code false} when {@code complete} joins the caller's transaction
	 */
	public CachingIdempotencyStore(IdempotencyStore delegate, DataSize maximumSize, Duration ttl,
			boolean writeThrough) {
		this(delegate, maximumSize, ttl, writeThrough, null, Ticker.systemTicker());
	}

	/** A cache kept right by {@code tracking}, which it starts and closes. */
	public CachingIdempotencyStore(IdempotencyStore delegate, DataSize maximumSize, Duration ttl,
			RecordTracking tracking) {
		this(delegate, maximumSize, ttl, false, tracking, Ticker.systemTicker());
	}

	CachingIdempotencyStore(IdempotencyStore delegate, DataSize maximumSize, Duration ttl, boolean writeThrough,
			@Nullable RecordTracking tracking, Ticker ticker) {
		Assert.notNull(delegate, "delegate must not be null");
		Assert.isTrue(maximumSize != null && maximumSize.toBytes() > 0, "maximumSize must be positive");
		Assert.isTrue(ttl != null && !ttl.isNegative() && !ttl.isZero(), "ttl must be positive");
		this.delegate = delegate;
		this.writeThrough = writeThrough;
		this.ttl = ttl;
		this.completed = Caffeine.newBuilder()
			.maximumWeight(maximumSize.toBytes())
			// Two bytes a character: an upper bound, whatever the strings' coding.
			.weigher((String key,
					Entry entry) -> (int) Math.min(Integer.MAX_VALUE,
							ENTRY_OVERHEAD + 2L * (key.length() + entry.fingerprint().value().length())
									+ entry.result().bytes().length))
			.expireAfter(Expiry.writing((String key, Entry entry) -> entry.ttl()))
			.ticker(ticker)
			.build();
		this.tracking = tracking;
		if (tracking != null) {
			tracking.start(new RecordTracking.Listener() {

				@Override
				public void invalidated(String trackingKey) {
					CachingIdempotencyStore.this.invalidations.incrementAndGet();
					CachingIdempotencyStore.this.completed.invalidate(trackingKey);
				}

				@Override
				public void invalidatedAll() {
					CachingIdempotencyStore.this.invalidations.incrementAndGet();
					CachingIdempotencyStore.this.completed.invalidateAll();
				}

			});
		}
	}

	@Override
	public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
		ClaimResult cached = cached(key);
		return (cached != null) ? cached : afterClaim(key, this.delegate.claim(key, fingerprint, lease));
	}

	private @Nullable ClaimResult cached(RecordKey key) {
		Entry cached = isServing() ? this.completed.getIfPresent(cacheKey(key)) : null;
		return (cached != null) ? new ClaimResult.Completed(cached.fingerprint(), cached.result()) : null;
	}

	private String cacheKey(RecordKey key) {
		return (this.tracking != null) ? this.tracking.trackingKey(key) : key.value();
	}

	private ClaimResult afterClaim(RecordKey key, ClaimResult claim) {
		if (claim instanceof ClaimResult.Completed completed) {
			if (this.tracking != null) {
				fill(key, this.tracking);
			}
			// Without write-through, a store that joins transactions may answer a claim
			// with a result its transaction may still roll back.
			else if (this.writeThrough
					|| !(TRANSACTIONS_PRESENT && TransactionSynchronizationManager.isActualTransactionActive())) {
				put(key.value(), completed.fingerprint(), completed.result(), null);
			}
		}
		return claim;
	}

	/** For the cache's TTL, or {@code timeToLive} if shorter. */
	private Entry put(String key, Fingerprint fingerprint, StoredResult result, @Nullable Duration timeToLive) {
		Entry entry = new Entry(fingerprint, result,
				(timeToLive != null && timeToLive.compareTo(this.ttl) < 0) ? timeToLive : this.ttl);
		this.completed.put(key, entry);
		return entry;
	}

	/**
	 * Caches what a tracked read of {@code key}, off the caller's path, returns, unless a
	 * report (perhaps about this very record) came from before the tracker was asked
	 * whether it is current to after the put.
	 */
	private void fill(RecordKey key, RecordTracking tracking) {
		String cacheKey = tracking.trackingKey(key);
		long before = this.invalidations.get();
		if (!tracking.isCurrent() || !this.filling.add(cacheKey)) {
			return;
		}
		try {
			// Only whenComplete: a tracking's own stage need not be a CompletableFuture.
			tracking.read(key).whenComplete((record, ex) -> {
				try {
					if (record != null && this.invalidations.get() == before) {
						Entry entry = put(cacheKey, record.fingerprint(), record.result(), record.timeToLive());
						if (this.invalidations.get() != before) {
							this.completed.asMap().remove(cacheKey, entry);
						}
					}
				}
				finally {
					this.filling.remove(cacheKey);
				}
			});
		}
		catch (RuntimeException ex) {
			this.filling.remove(cacheKey);
		}
	}

	@Override
	public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result, Duration ttl) {
		return afterComplete(key, fingerprint, result, ttl,
				this.delegate.complete(key, token, fingerprint, result, ttl));
	}

	private boolean afterComplete(RecordKey key, Fingerprint fingerprint, StoredResult result, Duration ttl,
			boolean completed) {
		if (completed && this.writeThrough && this.tracking == null) {
			put(key.value(), fingerprint, result, ttl);
		}
		return completed;
	}

	/** Whether the store behind can claim, complete and release without blocking. */
	@Override
	public boolean supportsAsync() {
		return this.delegate instanceof AsyncIdempotencyStore async && async.supportsAsync();
	}

	@Override
	public CompletionStage<ClaimResult> claimAsync(RecordKey key, Fingerprint fingerprint, Duration lease) {
		ClaimResult cached = cached(key);
		return (cached != null) ? CompletableFuture.completedFuture(cached)
				: delegate(AsyncIdempotencyStore.class).claimAsync(key, fingerprint, lease)
					.thenApply((claim) -> afterClaim(key, claim));
	}

	@Override
	public CompletionStage<Boolean> completeAsync(RecordKey key, String token, Fingerprint fingerprint,
			StoredResult result, Duration ttl) {
		return delegate(AsyncIdempotencyStore.class).completeAsync(key, token, fingerprint, result, ttl)
			.thenApply((completed) -> afterComplete(key, fingerprint, result, ttl, completed));
	}

	@Override
	public CompletionStage<Boolean> releaseAsync(RecordKey key, String token) {
		return delegate(AsyncIdempotencyStore.class).releaseAsync(key, token);
	}

	@Override
	public boolean release(RecordKey key, String token) {
		return this.delegate.release(key, token);
	}

	@Override
	public boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease) {
		return this.delegate.renew(key, token, fingerprint, lease);
	}

	@Override
	public int maxKeyLength() {
		return this.delegate.maxKeyLength();
	}

	@Override
	public Optional<IdempotencyRecord> inspect(RecordKey key) {
		return delegate(InspectableIdempotencyStore.class).inspect(key);
	}

	@Override
	public InProgressPage findInProgress(String keyPrefix, Duration olderThan, @Nullable String cursor, int limit) {
		return delegate(InspectableIdempotencyStore.class).findInProgress(keyPrefix, olderThan, cursor, limit);
	}

	/**
	 * Deletes the record from the store and this instance's cache; other instances drop
	 * it on their tracking's report, or when their entries expire.
	 */
	@Override
	public boolean delete(RecordKey key) {
		return dropped(key, delegate(InspectableIdempotencyStore.class).delete(key));
	}

	@Override
	public Deletion deleteInProgress(RecordKey key) {
		return dropped(key, delegate(InspectableIdempotencyStore.class).deleteInProgress(key));
	}

	@Override
	public Deletion deleteUnlessHeld(RecordKey key) {
		return dropped(key, delegate(InspectableIdempotencyStore.class).deleteUnlessHeld(key));
	}

	/** {@code deletion}, once the key has left this instance's cache. */
	private <T> T dropped(RecordKey key, T deletion) {
		this.completed.invalidate(cacheKey(key));
		return deletion;
	}

	private <T> T delegate(Class<T> type) {
		if (type.isInstance(this.delegate)) {
			return type.cast(this.delegate);
		}
		throw new UnsupportedOperationException(
				this.delegate.getClass().getName() + " does not implement " + type.getSimpleName());
	}

	public IdempotencyStore getDelegate() {
		return this.delegate;
	}

	public boolean isWriteThrough() {
		return this.writeThrough;
	}

	/** The tracker that keeps this cache right, or {@code null}. */
	public @Nullable RecordTracking getTracking() {
		return this.tracking;
	}

	/** Whether cached results are served now (with a tracker, while it is current). */
	public boolean isServing() {
		return this.tracking == null || this.tracking.isCurrent();
	}

	/** Number of cached results (Caffeine's estimate). */
	public long cachedResults() {
		return this.completed.estimatedSize();
	}

	/** Estimated total size of the cached results, in bytes. */
	public long cachedBytes() {
		this.completed.cleanUp();
		return this.completed.policy().eviction().orElseThrow().weightedSize().orElse(0);
	}

	/** Closes the tracker, if any; the store behind is left as it is. */
	@Override
	public void close() {
		if (this.tracking != null) {
			this.tracking.close();
		}
	}

	private record Entry(Fingerprint fingerprint, StoredResult result, Duration ttl) {
	}

}
