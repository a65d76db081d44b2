package io.github.idempotent.store.cache;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.springframework.util.unit.DataSize;

import io.github.idempotent.store.AbstractInspectableIdempotencyStoreContractTest;
import io.github.idempotent.store.AsyncIdempotencyStore;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The local cache in front of a store with asynchronous calls keeps the store's contract
 * on both paths, and hands on what the store's claim says, take-overs included.
 */
class AsyncCachingIdempotencyStoreContractTests extends AbstractInspectableIdempotencyStoreContractTest {

	@Override
	protected IdempotencyStore createStore() {
		return new CachingIdempotencyStore(new AsyncInMemoryStore(), DataSize.ofMegabytes(1), Duration.ofMinutes(1));
	}

	@Test
	void theStoresAcquiredIsHandedOnUnchangedOnBothPaths() throws Exception {
		ClaimResult.Acquired takeover = new ClaimResult.Acquired("t-2", 2, Instant.parse("2026-12-03T19:42:11Z"));
		FixedClaimStore fixed = new FixedClaimStore(takeover);
		CachingIdempotencyStore cache = new CachingIdempotencyStore(fixed, DataSize.ofMegabytes(1),
				Duration.ofMinutes(1));
		RecordKey key = newKey();
		Fingerprint fp = new Fingerprint("fp");
		assertThat(cache.claim(key, fp, LEASE)).isSameAs(takeover);
		assertThat(cache.claimAsync(key, fp, LEASE).toCompletableFuture().get(5, TimeUnit.SECONDS)).isSameAs(takeover);
	}

	static class AsyncInMemoryStore extends InMemoryIdempotencyStore implements AsyncIdempotencyStore {

		@Override
		public CompletionStage<ClaimResult> claimAsync(RecordKey key, Fingerprint fingerprint, Duration lease) {
			return CompletableFuture.supplyAsync(() -> claim(key, fingerprint, lease));
		}

		@Override
		public CompletionStage<Boolean> completeAsync(RecordKey key, String token, Fingerprint fingerprint,
				StoredResult result, Duration ttl) {
			return CompletableFuture.supplyAsync(() -> complete(key, token, fingerprint, result, ttl));
		}

		@Override
		public CompletionStage<Boolean> releaseAsync(RecordKey key, String token) {
			return CompletableFuture.supplyAsync(() -> release(key, token));
		}

	}

	static final class FixedClaimStore extends AsyncInMemoryStore {

		private final ClaimResult claim;

		FixedClaimStore(ClaimResult claim) {
			this.claim = claim;
		}

		@Override
		public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
			return this.claim;
		}

	}

}
