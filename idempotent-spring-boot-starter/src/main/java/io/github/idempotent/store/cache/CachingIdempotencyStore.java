package io.github.idempotent.store.cache;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
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
 * Keeps completed results in a bounded local cache in front of another store, so that a
 * replay of a hot key is answered from this JVM's memory without a round trip.
 * <p>
 * Only completed results are cached: a claim that finds a key in progress, or acquires
 * it, always goes to the store, so the store alone still decides who runs a call, and its
 * answer is handed on as it is, on the blocking and the asynchronous path alike: an
 * {@link ClaimResult.Acquired} keeps the attempt and the start of the call it takes over,
 * which only the store can know. The cached fingerprint goes back to the executor with
 * the result, so a different payload under the same key is still refused.
 * <p>
 * <b>With {@link RecordTracking}</b> (the Redis store's, on by default): the store tells
 * the cache when a record changes there, whoever changes it, so a result deleted,
 * replaced or expired in the store is not replayed from here once the store's report has
 * arrived, and never later than the tracker's maximum staleness after the change. A
 * result enters the cache on its first replay here, through a tracked read off the
 * caller's path (never written through: the store tracks only what the tracker read);
 * while the tracker is not current (connection lost, stalled, being re-established) the
 * cache is bypassed, and whatever it held is dropped whenever reports may have been lost.
 * <p>
 * <b>Without</b> (any store, opt-in): a result enters the cache when this instance
 * completes it (write-through: the store's {@code complete} comes first) or when a claim
 * reads it from the store, and is replayed until its cache entry expires even if the
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
public class CachingIdempotencyStore implements AsyncIdempotencyStore, InspectableIdempotencyStore, AutoCloseable {

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

	private final @Nullable RecordTracking tracking;

	/**
	 * Counts the tracker's reports: a tracked read whose reply lands after a report may
	 * hold what the report was about, so it is not kept (see {@link #fill}).
	 */
	private final AtomicLong invalidations = new AtomicLong();

	private final ConcurrentHashMap<String, Boolean> filling = new ConcurrentHashMap<>();

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
		this(delegate, maximumSize, ttl, writeThrough, null, Ticker.systemTicker());
	}

	/**
	 * A cache kept right by {@code tracking}, which it starts and closes.
	 * @param maximumSize largest total size of the cached results (with their keys)
	 * @param ttl longest time a result stays cached, and never longer than its record
	 */
	public CachingIdempotencyStore(IdempotencyStore delegate, DataSize maximumSize, Duration ttl,
			RecordTracking tracking) {
		this(delegate, maximumSize, ttl, false, tracking, Ticker.systemTicker());
	}

	CachingIdempotencyStore(IdempotencyStore delegate, DataSize maximumSize, Duration ttl, boolean writeThrough,
			Ticker ticker) {
		this(delegate, maximumSize, ttl, writeThrough, null, ticker);
	}

	private CachingIdempotencyStore(IdempotencyStore delegate, DataSize maximumSize, Duration ttl, boolean writeThrough,
			@Nullable RecordTracking tracking, Ticker ticker) {
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
		this.tracking = tracking;
		if (tracking != null) {
			tracking.start(new Invalidation());
		}
	}

	private static int weigh(String key, Entry entry) {
		// Two bytes a character: an upper bound, whatever the strings' coding.
		long bytes = ENTRY_OVERHEAD + 2L * (key.length() + entry.fingerprint().value().length())
				+ entry.result().bytes().length;
		return (int) Math.min(Integer.MAX_VALUE, bytes);
	}

	@Override
	public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
		ClaimResult cached = cached(key);
		if (cached != null) {
			return cached;
		}
		ClaimResult claim = this.delegate.claim(key, fingerprint, lease);
		afterClaim(key, claim);
		return claim;
	}

	private @Nullable ClaimResult cached(RecordKey key) {
		RecordTracking tracking = this.tracking;
		if (tracking != null && !tracking.isCurrent()) {
			return null;
		}
		Entry cached = this.completed.getIfPresent(cacheKey(key));
		return (cached != null) ? new ClaimResult.Completed(cached.fingerprint(), cached.result()) : null;
	}

	private String cacheKey(RecordKey key) {
		return (this.tracking != null) ? this.tracking.trackingKey(key) : key.value();
	}

	private void afterClaim(RecordKey key, ClaimResult claim) {
		if (!(claim instanceof ClaimResult.Completed completed)) {
			return;
		}
		if (this.tracking != null) {
			fill(this.tracking, key);
		}
		else if (this.writeThrough || !inTransaction()) {
			this.completed.put(key.value(), new Entry(completed.fingerprint(), completed.result(), this.ttlNanos));
		}
	}

	/**
	 * Caches what a tracked read of {@code key} returns, unless a report arrives while
	 * the read is on its way: the report may be about this very record, changed after the
	 * read. The count is read before the tracker is asked whether it is current (its
	 * session ends before it reports that) and checked again after the entry is in (a
	 * report between the check and the put would otherwise be missed), so an entry stays
	 * only if no report came from before the read was sent to after it was cached.
	 */
	private void fill(RecordTracking tracking, RecordKey key) {
		String cacheKey = tracking.trackingKey(key);
		long before = this.invalidations.get();
		if (!tracking.isCurrent() || this.filling.putIfAbsent(cacheKey, Boolean.TRUE) != null) {
			return;
		}
		CompletionStage<RecordTracking.@Nullable TrackedRecord> read;
		try {
			read = tracking.read(key);
		}
		catch (RuntimeException ex) {
			this.filling.remove(cacheKey);
			return;
		}
		read.whenComplete((record, ex) -> {
			try {
				if (record != null && this.invalidations.get() == before) {
					long ttlNanos = Math.min(this.ttlNanos, record.timeToLive().toNanos());
					Entry entry = new Entry(record.fingerprint(), record.result(), ttlNanos);
					this.completed.put(cacheKey, entry);
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

	@Override
	public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result, Duration ttl) {
		boolean completed = this.delegate.complete(key, token, fingerprint, result, ttl);
		afterComplete(key, fingerprint, result, ttl, completed);
		return completed;
	}

	private void afterComplete(RecordKey key, Fingerprint fingerprint, StoredResult result, Duration ttl,
			boolean completed) {
		if (completed && this.writeThrough && this.tracking == null) {
			this.completed.put(key.value(), new Entry(fingerprint, result, Math.min(this.ttlNanos, ttl.toNanos())));
		}
	}

	/**
	 * Whether the store behind can claim, complete and release without blocking; the
	 * cache itself never blocks.
	 */
	@Override
	public boolean supportsAsync() {
		return this.delegate instanceof AsyncIdempotencyStore async && async.supportsAsync();
	}

	@Override
	public CompletionStage<ClaimResult> claimAsync(RecordKey key, Fingerprint fingerprint, Duration lease) {
		ClaimResult cached = cached(key);
		if (cached != null) {
			return CompletableFuture.completedFuture(cached);
		}
		return asyncDelegate().claimAsync(key, fingerprint, lease).thenApply((claim) -> {
			afterClaim(key, claim);
			return claim;
		});
	}

	@Override
	public CompletionStage<Boolean> completeAsync(RecordKey key, String token, Fingerprint fingerprint,
			StoredResult result, Duration ttl) {
		return asyncDelegate().completeAsync(key, token, fingerprint, result, ttl).thenApply((completed) -> {
			afterComplete(key, fingerprint, result, ttl, completed);
			return completed;
		});
	}

	@Override
	public CompletionStage<Boolean> releaseAsync(RecordKey key, String token) {
		return asyncDelegate().releaseAsync(key, token);
	}

	private AsyncIdempotencyStore asyncDelegate() {
		Assert.state(this.delegate instanceof AsyncIdempotencyStore, "The store behind the cache is not asynchronous");
		return (AsyncIdempotencyStore) this.delegate;
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

	/**
	 * The record as the store behind the cache holds it.
	 */
	@Override
	public Optional<IdempotencyRecord> inspect(RecordKey key) {
		return inspectableDelegate().inspect(key);
	}

	@Override
	public InProgressPage findInProgress(String keyPrefix, Duration olderThan, @Nullable String cursor, int limit) {
		return inspectableDelegate().findInProgress(keyPrefix, olderThan, cursor, limit);
	}

	/**
	 * Deletes the record from the store and this instance's cache; other instances drop
	 * it when their tracking reports the change, or, with a cache bounded by its TTL
	 * only, when their entries expire.
	 */
	@Override
	public boolean delete(RecordKey key) {
		boolean deleted = inspectableDelegate().delete(key);
		this.completed.invalidate(cacheKey(key));
		return deleted;
	}

	@Override
	public Deletion deleteInProgress(RecordKey key) {
		Deletion deletion = inspectableDelegate().deleteInProgress(key);
		this.completed.invalidate(cacheKey(key));
		return deletion;
	}

	@Override
	public Deletion deleteUnlessHeld(RecordKey key) {
		Deletion deletion = inspectableDelegate().deleteUnlessHeld(key);
		this.completed.invalidate(cacheKey(key));
		return deletion;
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
	 * The tracker that keeps this cache right, or {@code null} for a cache bounded by its
	 * TTL only.
	 */
	public @Nullable RecordTracking getTracking() {
		return this.tracking;
	}

	/**
	 * Whether cached results are served now: always without a tracker; with one, while it
	 * is current.
	 */
	public boolean isServing() {
		return this.tracking == null || this.tracking.isCurrent();
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

	/**
	 * Closes the tracker, if any; the store behind is left as it is.
	 */
	@Override
	public void close() {
		if (this.tracking != null) {
			this.tracking.close();
		}
	}

	/**
	 * Counts a report before acting on it: see {@link #fill}.
	 */
	private final class Invalidation implements RecordTracking.Listener {

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
