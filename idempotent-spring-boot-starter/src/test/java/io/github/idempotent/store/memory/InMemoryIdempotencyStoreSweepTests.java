package io.github.idempotent.store.memory;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.StoredResult;

import static org.assertj.core.api.Assertions.assertThat;

class InMemoryIdempotencyStoreSweepTests {

	private static final Fingerprint FP = new Fingerprint("fp");

	@Test
	void expiredRecordsThatAreNeverTouchedAgainAreSwept() throws InterruptedException {
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
		for (int i = 0; i < 3000; i++) {
			RecordKey key = new RecordKey("short-" + i);
			String token = ((ClaimResult.Acquired) store.claim(key, FP, Duration.ofSeconds(30))).token();
			store.complete(key, token, FP, new StoredResult(new byte[] { 'V' }), Duration.ofMillis(1));
		}
		Thread.sleep(5);
		for (int i = 0; i < 4000; i++) {
			store.claim(new RecordKey("long-" + i), FP, Duration.ofMinutes(5));
		}
		// Every short record expired long before the last sweep; only the live ones stay.
		assertThat(store.size()).isLessThanOrEqualTo(4000);
	}

}
