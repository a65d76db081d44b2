package io.github.idempotent.store.cache;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

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
 * The cache is bounded by bytes, not by a number of results (see
 * {@link LocalResultCache}); a tracker keeps it right through {@link TrackedEntries}.
 */
public class CachingIdempotencyStore implements AsyncIdempotencyStore, InspectableIdempotencyStore, AutoCloseable {

	private static final boolean TRANSACTIONS_PRESENT = ClassUtils.isPresent(
			"org.springframework.transaction.support.TransactionSynchronizationManager",
			CachingIdempotencyStore.class.getClassLoader());

	private final IdempotencyStore delegate;

	private final boolean writeThrough;

	private final LocalResultCache completed;

	private final @Nullable RecordTracking tracking;

	private final @Nullable TrackedEntries tracked;

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
		this.completed = new LocalResultCache(maximumSize, ttl, ticker);
		this.delegate = delegate;
		this.writeThrough = writeThrough;
		this.tracking = tracking;
		if (tracking != null) {
			TrackedEntries tracked = new TrackedEntries(tracking, this.completed);
			this.tracked = tracked;
			tracking.start(tracked);
		}
		else {
			this.tracked = null;
		}
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
		LocalResultCache.Entry cached = this.completed.get(cacheKey(key));
		return (cached != null) ? new ClaimResult.Completed(cached.fingerprint(), cached.result()) : null;
	}

	private String cacheKey(RecordKey key) {
		return (this.tracking != null) ? this.tracking.trackingKey(key) : key.value();
	}

	private void afterClaim(RecordKey key, ClaimResult claim) {
		if (!(claim instanceof ClaimResult.Completed completed)) {
			return;
		}
		if (this.tracked != null) {
			this.tracked.fill(key);
		}
		else if (this.writeThrough || !inTransaction()) {
			this.completed.put(key.value(), completed.fingerprint(), completed.result(), null);
		}
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
			this.completed.put(key.value(), fingerprint, result, ttl);
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
		return this.completed.weightedSize();
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

}
