package io.github.idempotent.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.idempotent.store.AsyncIdempotencyStore;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.StoredResult;

/**
 * The store as the protocol uses it: a blocking call's steps on the calling thread, an
 * asynchronous call's through {@link AsyncIdempotencyStore} if supported, else on the
 * blocking-store threads.
 */
final class StoreAccess {

	final IdempotencyStore store;

	private final IdempotencyThreads threads;

	StoreAccess(IdempotencyStore store, IdempotencyThreads threads) {
		this.store = store;
		this.threads = threads;
	}

	ClaimResult claim(ProtocolCall call) {
		return this.store.claim(call.key, call.fingerprint, call.policy.lease());
	}

	CompletableFuture<ClaimResult> claimAsync(ProtocolCall call) {
		return async(false, (async) -> async.claimAsync(call.key, call.fingerprint, call.policy.lease()),
				() -> claim(call));
	}

	/** The owner's completion, sent on the calling thread if {@code call} is blocking. */
	CompletableFuture<Boolean> complete(ProtocolCall call, String token, StoredResult result) {
		return async(call.blocking,
				(async) -> async.completeAsync(call.key, token, call.fingerprint, result, call.policy.ttl()),
				() -> this.store.complete(call.key, token, call.fingerprint, result, call.policy.ttl()));
	}

	/** The owner's release, sent on the calling thread if {@code call} is blocking. */
	CompletableFuture<Boolean> release(ProtocolCall call, String token) {
		return async(call.blocking, (async) -> async.releaseAsync(call.key, token),
				() -> this.store.release(call.key, token));
	}

	private <T> CompletableFuture<T> async(boolean blocking,
			Function<AsyncIdempotencyStore, CompletionStage<T>> nonBlocking, Supplier<T> step) {
		if (blocking) {
			return Futures.call(() -> CompletableFuture.completedFuture(step.get()));
		}
		if (this.store instanceof AsyncIdempotencyStore async && async.supportsAsync()) {
			return Futures.call(() -> nonBlocking.apply(async));
		}
		return Futures.call(() -> CompletableFuture.supplyAsync(step, this.threads.blockingStoreExecutor));
	}

}
