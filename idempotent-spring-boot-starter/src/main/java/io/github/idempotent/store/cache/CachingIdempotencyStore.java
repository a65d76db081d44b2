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
 * Keeps completed results in a local cache bounded by bytes in front of another store, so
 * that a replay of a hot key costs no round trip. Only completed results are cached: the
 * store alone still decides who runs a call.
 * <p>
 * With {@link RecordTracking} (the Redis store's), the store reports every change of a
 * cached record, and the cache is bypassed while the tracker is not current. Without it,
 * a cached result is replayed until its entry expires, even if the record leaves the
 * store earlier; {@code ttl} should then be no longer than the shortest TTL of the
 * methods that use the store. See docs/stores.md.
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

	/** Whether the store behind can claim, complete and release without blocking. */
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
	 * it on their tracking's report, or when their entries expire.
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

	/** Whether the store behind the cache can be inspected. */
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
	 * Without write-through, a store that joins transactions may answer a claim with a
	 * result its transaction may still roll back.
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
		return this.completed.weightedSize();
	}

	/** Drops every cached result; the store is untouched. */
	public void clear() {
		this.completed.invalidateAll();
	}

	/** Closes the tracker, if any; the store behind is left as it is. */
	@Override
	public void close() {
		if (this.tracking != null) {
			this.tracking.close();
		}
	}

}
