package io.github.idempotent.core;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Supplier;

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
		return async((async) -> async.claimAsync(key, fingerprint, lease), () -> claim(key, fingerprint, lease));
	}

	CompletableFuture<Boolean> completeAsync(RecordKey key, String token, Fingerprint fingerprint, StoredResult result,
			Duration ttl) {
		return async((async) -> async.completeAsync(key, token, fingerprint, result, ttl),
				() -> complete(key, token, fingerprint, result, ttl));
	}

	CompletableFuture<Boolean> releaseAsync(RecordKey key, String token) {
		return async((async) -> async.releaseAsync(key, token), () -> release(key, token));
	}

	private <T> CompletableFuture<T> async(Function<AsyncIdempotencyStore, CompletionStage<T>> nonBlocking,
			Supplier<T> blocking) {
		if (this.store instanceof AsyncIdempotencyStore async && async.supportsAsync()) {
			return Futures.call(() -> nonBlocking.apply(async));
		}
		return Futures.call(() -> CompletableFuture.supplyAsync(blocking, this.threads.blockingStoreExecutor()));
	}

}
