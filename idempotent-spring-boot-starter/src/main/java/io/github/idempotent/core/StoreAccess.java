package io.github.idempotent.core;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

import io.github.idempotent.store.AsyncIdempotencyStore;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;

/**
 * The store as the protocol uses it: its blocking primitives as they are, and each of
 * them as a future for asynchronous callers, through the store's own non-blocking calls
 * when it has them ({@link AsyncIdempotencyStore}), else on the blocking-store threads,
 * never on the thread that completes a caller's future.
 */
final class StoreAccess {

	private final IdempotencyStore store;

	private final IdempotencyThreads threads;

	StoreAccess(IdempotencyStore store, IdempotencyThreads threads) {
		this.store = store;
		this.threads = threads;
	}

	IdempotencyStore store() {
		return this.store;
	}

	ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
		return this.store.claim(key, fingerprint, lease);
	}

	boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result, Duration ttl) {
		return this.store.complete(key, token, fingerprint, result, ttl);
	}

	boolean release(RecordKey key, String token) {
		return this.store.release(key, token);
	}

	CompletableFuture<ClaimResult> claimAsync(RecordKey key, Fingerprint fingerprint, Duration lease) {
		AsyncIdempotencyStore async = asyncStore();
		if (async != null) {
			return Futures.call(() -> async.claimAsync(key, fingerprint, lease));
		}
		return Futures.call(() -> CompletableFuture.supplyAsync(() -> this.store.claim(key, fingerprint, lease),
				this.threads.blockingStoreExecutor()));
	}

	CompletableFuture<Boolean> completeAsync(RecordKey key, String token, Fingerprint fingerprint, StoredResult result,
			Duration ttl) {
		AsyncIdempotencyStore async = asyncStore();
		if (async != null) {
			return Futures.call(() -> async.completeAsync(key, token, fingerprint, result, ttl));
		}
		return Futures
			.call(() -> CompletableFuture.supplyAsync(() -> this.store.complete(key, token, fingerprint, result, ttl),
					this.threads.blockingStoreExecutor()));
	}

	CompletableFuture<Boolean> releaseAsync(RecordKey key, String token) {
		AsyncIdempotencyStore async = asyncStore();
		if (async != null) {
			return Futures.call(() -> async.releaseAsync(key, token));
		}
		return Futures.call(() -> CompletableFuture.supplyAsync(() -> this.store.release(key, token),
				this.threads.blockingStoreExecutor()));
	}

	private @Nullable AsyncIdempotencyStore asyncStore() {
		return (this.store instanceof AsyncIdempotencyStore async && async.supportsAsync()) ? async : null;
	}

}
