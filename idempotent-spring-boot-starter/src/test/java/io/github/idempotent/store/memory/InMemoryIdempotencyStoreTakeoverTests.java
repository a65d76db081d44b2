package io.github.idempotent.store.memory;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

import org.junit.jupiter.api.Test;

import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.InspectableIdempotencyStore.Deletion;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How long the in-memory store remembers a call that never finished, so that a claim that
 * takes it over knows it.
 */
class InMemoryIdempotencyStoreTakeoverTests {

	private static final Fingerprint FP = new Fingerprint("fp");

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration SHORT = Duration.ofMillis(1);

	@Test
	void aPlaceholderPastItsLeaseOutlivesTheSweeps() throws InterruptedException {
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
		RecordKey key = new RecordKey("abandoned");
		Instant before = Instant.now().truncatedTo(ChronoUnit.SECONDS);
		store.claim(key, FP, SHORT);
		Thread.sleep(5);
		// Enough claims of other keys for several regular sweeps, and touches of the key
		// by an owner it is not (a late renewal of a call taken over long ago).
		for (int i = 0; i < 5000; i++) {
			store.claim(new RecordKey("other-" + i), FP, SHORT);
		}
		assertThat(store.renew(key, "not-the-owner", FP, LEASE)).isFalse();
		assertThat(store.release(key, "not-the-owner")).isFalse();
		assertThat(store.inspect(key)).isEmpty();
		ClaimResult.Acquired second = (ClaimResult.Acquired) store.claim(key, FP, LEASE);
		assertThat(second.attempt()).isEqualTo(2);
		assertThat(second.previousAttemptStartedAt()).isNotNull().isBetween(before, Instant.now());
	}

	@Test
	void aCallThatNeverFinishedIsForgottenOnceItsTakeoverMemoryHasPassed() throws InterruptedException {
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(10, Duration.ofSeconds(1));
		RecordKey remembered = new RecordKey("remembered");
		RecordKey forgotten = new RecordKey("forgotten");
		store.claim(forgotten, FP, SHORT);
		store.claim(remembered, FP, Duration.ofSeconds(1));
		Thread.sleep(1200);
		// remembered: 0.2 s past its lease, within the memory (0.8 s to spare);
		// forgotten: 1.2 s past.
		assertThat(((ClaimResult.Acquired) store.claim(remembered, FP, LEASE)).attempt()).isEqualTo(2);
		ClaimResult.Acquired fresh = (ClaimResult.Acquired) store.claim(forgotten, FP, LEASE);
		assertThat(fresh.attempt()).isOne();
		assertThat(fresh.previousAttemptStartedAt()).isNull();
	}

	@Test
	void aForcedDeleteOfAPlaceholderPastItsLeaseKeepsWhatATakeoverNeeds() throws InterruptedException {
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
		RecordKey key = new RecordKey("hung");
		String hung = ((ClaimResult.Acquired) store.claim(key, FP, SHORT)).token();
		Thread.sleep(5);
		assertThat(store.deleteInProgress(key)).isEqualTo(Deletion.NONE);
		// Long enough to be live still when it is deleted, whatever the machine's load
		// (1 ms was not: a pause between the claim and the delete let it lapse first).
		ClaimResult.Acquired second = (ClaimResult.Acquired) store.claim(key, FP, Duration.ofMillis(200));
		assertThat(second.attempt()).isEqualTo(2);
		assertThat(store.deleteInProgress(key)).isEqualTo(Deletion.DELETED);
		Thread.sleep(250);
		// A tombstone past the lease it had is remembered too.
		ClaimResult.Acquired third = (ClaimResult.Acquired) store.claim(key, FP, LEASE);
		assertThat(third.attempt()).isEqualTo(3);
		assertThat(store.complete(key, hung, FP, new StoredResult(new byte[] { 1 }), LEASE)).isFalse();
		assertThat(store.complete(key, second.token(), FP, new StoredResult(new byte[] { 1 }), LEASE)).isFalse();
	}

	@Test
	void aRenewalKeepsTheAttemptItRenews() throws InterruptedException {
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
		RecordKey key = new RecordKey("renewed");
		store.claim(key, FP, SHORT);
		Thread.sleep(5);
		ClaimResult.Acquired second = (ClaimResult.Acquired) store.claim(key, FP, SHORT);
		Thread.sleep(5);
		// Past its lease, not taken over: the owner's renewal holds the key again.
		assertThat(store.renew(key, second.token(), FP, SHORT)).isTrue();
		Thread.sleep(5);
		assertThat(((ClaimResult.Acquired) store.claim(key, FP, LEASE)).attempt()).isEqualTo(3);
	}

	@Test
	void aRenewalKeepsWhenItsCallClaimedTheKey() throws InterruptedException {
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
		RecordKey key = new RecordKey("renewed");
		String token = ((ClaimResult.Acquired) store.claim(key, FP, LEASE)).token();
		Instant claimedAt = store.inspect(key).orElseThrow().claimedAt();
		Thread.sleep(5);
		assertThat(store.renew(key, token, FP, LEASE)).isTrue();
		assertThat(store.inspect(key).orElseThrow().claimedAt()).isEqualTo(claimedAt);
	}

}
