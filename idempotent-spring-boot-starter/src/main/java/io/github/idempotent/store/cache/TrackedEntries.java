package io.github.idempotent.store.cache;

import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.RecordTracking;

/**
 * Keeps a {@link LocalResultCache} in step with a {@link RecordTracking}: a result enters
 * through a tracked read off the caller's path, and leaves when the tracker reports a
 * change (or that reports may have been lost).
 */
final class TrackedEntries implements RecordTracking.Listener {

	private final RecordTracking tracking;

	private final LocalResultCache cache;

	/** Counts the tracker's reports (see {@link #fill}). */
	private final AtomicLong invalidations = new AtomicLong();

	private final ConcurrentHashMap<String, Boolean> filling = new ConcurrentHashMap<>();

	TrackedEntries(RecordTracking tracking, LocalResultCache cache) {
		this.tracking = tracking;
		this.cache = cache;
	}

	/**
	 * Caches what a tracked read of {@code key} returns unless a report arrives
	 * meanwhile: it may be about this very record. The count is read before the tracker
	 * is asked whether it is current and checked again after the put, so an entry stays
	 * only if no report came from before the read to after it was cached.
	 */
	void fill(RecordKey key) {
		String cacheKey = this.tracking.trackingKey(key);
		long before = this.invalidations.get();
		if (!this.tracking.isCurrent() || this.filling.putIfAbsent(cacheKey, Boolean.TRUE) != null) {
			return;
		}
		CompletionStage<RecordTracking.@Nullable TrackedRecord> read;
		try {
			read = this.tracking.read(key);
		}
		catch (RuntimeException ex) {
			this.filling.remove(cacheKey);
			return;
		}
		read.whenComplete((record, ex) -> {
			try {
				if (record != null && this.invalidations.get() == before) {
					LocalResultCache.Entry entry = this.cache.put(cacheKey, record.fingerprint(), record.result(),
							record.timeToLive());
					if (this.invalidations.get() != before) {
						this.cache.remove(cacheKey, entry);
					}
				}
			}
			finally {
				this.filling.remove(cacheKey);
			}
		});
	}

	@Override
	public void invalidated(String trackingKey) {
		this.invalidations.incrementAndGet();
		this.cache.invalidate(trackingKey);
	}

	@Override
	public void invalidatedAll() {
		this.invalidations.incrementAndGet();
		this.cache.invalidateAll();
	}

}
