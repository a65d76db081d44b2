package io.github.idempotent.store.memory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.InspectableIdempotencyStore.Deletion;
import io.github.idempotent.store.StoredResult;

import static io.github.idempotent.store.memory.InMemoryIdempotencyStore.DEFAULT_TAKEOVER_MEMORY;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The bound of the in-memory store: expired records make room, live ones never do.
 */
class InMemoryIdempotencyStoreBoundTests {

	private static final Fingerprint FP = new Fingerprint("fp");

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofMinutes(10);

	private static final StoredResult RESULT = new StoredResult(new byte[] { 'V' });

	private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(2);

	private static RecordKey key(String name) {
		return new RecordKey(name);
	}

	private String acquire(String name, Duration lease) {
		return ((ClaimResult.Acquired) this.store.claim(key(name), FP, lease)).token();
	}

	@Test
	void newKeyIsRefusedWhenEveryRecordIsLiveAndNoneIsEvicted() {
		acquire("in-progress", LEASE);
		String token = acquire("completed", LEASE);
		this.store.complete(key("completed"), token, FP, RESULT, TTL);

		assertThatExceptionOfType(InMemoryStoreFullException.class)
			.isThrownBy(() -> this.store.claim(key("new"), FP, LEASE))
			.withMessageContaining("maximum of 2 records")
			.withMessageContaining("idempotent.store.memory.maximum-records");

		assertThat(this.store.claim(key("in-progress"), FP, LEASE)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(this.store.claim(key("completed"), FP, LEASE)).isInstanceOf(ClaimResult.Completed.class);
		assertThat(this.store.size()).isEqualTo(2);
	}

	@Test
	void expiredRecordsAreSweptToMakeRoom() throws InterruptedException {
		String token = acquire("short-result", LEASE);
		this.store.complete(key("short-result"), token, FP, RESULT, Duration.ofMillis(1));
		acquire("abandoned", Duration.ofMillis(1));
		Thread.sleep(5);

		assertThat(this.store.claim(key("new-1"), FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(this.store.claim(key("new-2"), FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(this.store.size()).isEqualTo(2);
		assertThatExceptionOfType(InMemoryStoreFullException.class)
			.isThrownBy(() -> this.store.claim(key("new-3"), FP, LEASE));
	}

	@Test
	void aFullStoreForgetsACallThatNeverFinishedBeforeItRefusesANewKey() throws InterruptedException {
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(2);
		store.claim(key("abandoned"), FP, Duration.ofMillis(1));
		String token = ((ClaimResult.Acquired) store.claim(key("failed"), FP, LEASE)).token();
		Thread.sleep(5);
		// Remembered past its lease, and counted: the bound holds it.
		assertThat(store.size()).isEqualTo(2);
		assertThat(store.claim(key("new"), FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(store.size()).isEqualTo(2);
		store.release(key("failed"), token);
		ClaimResult.Acquired again = (ClaimResult.Acquired) store.claim(key("abandoned"), FP, LEASE);
		assertThat(again.attempt()).isOne();
		assertThat(again.previousAttemptStartedAt()).isNull();
	}

	@Test
	void expiredRecordOfTheSameKeyIsTakenOverWhenFullAsTheNextAttempt() throws InterruptedException {
		acquire("abandoned", Duration.ofMillis(1));
		acquire("other", LEASE);
		Thread.sleep(5);
		ClaimResult claim = this.store.claim(key("abandoned"), FP, LEASE);
		assertThat(claim).isInstanceOfSatisfying(ClaimResult.Acquired.class,
				(acquired) -> assertThat(acquired.attempt()).isEqualTo(2));
		assertThat(this.store.size()).isEqualTo(2);
	}

	@Test
	void releasedKeyMakesRoom() {
		String token = acquire("failed", LEASE);
		acquire("other", LEASE);
		this.store.release(key("failed"), token);
		assertThat(this.store.claim(key("new"), FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void ownerWhoseRecordVanishedStillCompletesWhenFull() throws InterruptedException {
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(1);
		String stalled = ((ClaimResult.Acquired) store.claim(key("stalled"), FP, Duration.ofMillis(1))).token();
		Thread.sleep(5);
		// Another key sweeps the stalled owner's expired placeholder and fills the store.
		assertThat(store.claim(key("other"), FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);

		// The owner ran; nobody took its key over: its result is kept, or a retry would
		// run the method again.
		assertThat(store.complete(key("stalled"), stalled, FP, RESULT, TTL)).isTrue();
		assertThat(store.claim(key("stalled"), FP, LEASE)).isInstanceOf(ClaimResult.Completed.class);
	}

	@Test
	void concurrentClaimsOfNewKeysNeverExceedTheBound() throws Exception {
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(100);
		ExecutorService pool = Executors.newFixedThreadPool(8);
		try {
			List<Future<Boolean>> claims = new ArrayList<>();
			for (int i = 0; i < 400; i++) {
				RecordKey key = key("concurrent-" + i);
				claims.add(pool.submit(() -> {
					try {
						return store.claim(key, FP, LEASE) instanceof ClaimResult.Acquired;
					}
					catch (InMemoryStoreFullException ex) {
						return false;
					}
				}));
			}
			int acquired = 0;
			for (Future<Boolean> claim : claims) {
				acquired += claim.get() ? 1 : 0;
			}
			assertThat(acquired).isEqualTo(100);
			assertThat(store.size()).isEqualTo(100);
		}
		finally {
			pool.shutdownNow();
		}
	}

	@Test
	void anOperatorsDeleteMakesRoom() {
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(1);
		store.claim(key("stuck"), FP, LEASE);
		assertThat(store.delete(key("stuck"))).isTrue();
		assertThat(store.claim(key("new"), FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void aLargeResultHoldsItsBytesUntilItIsDeleted() {
		// A placeholder of a short key takes about 280 estimated bytes, this result 3500.
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(100, 4000, 4000, Duration.ofHours(1));
		String token = ((ClaimResult.Acquired) store.claim(key("large"), FP, LEASE)).token();
		store.complete(key("large"), token, FP, new StoredResult(new byte[3500]), TTL);
		assertThatExceptionOfType(InMemoryStoreFullException.class).isThrownBy(() -> store.claim(key("k2"), FP, LEASE))
			.withMessageContaining("idempotent.store.memory.maximum-size");
		assertThat(store.deleteUnlessHeld(key("large"))).isEqualTo(Deletion.DELETED);
		assertThat(store.claim(key("k2"), FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void anExpiredResultTakenOverByAClaimGivesItsBytesBack() throws InterruptedException {
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(100, 4000, 4000, Duration.ofHours(1));
		String token = ((ClaimResult.Acquired) store.claim(key("large"), FP, LEASE)).token();
		store.complete(key("large"), token, FP, new StoredResult(new byte[3500]), Duration.ofMillis(1));
		Thread.sleep(5);
		assertThat(store.claim(key("large"), FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(store.claim(key("k2"), FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void aResultWithAShortTtlMakesRoomOnceItExpires() throws InterruptedException {
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(1);
		String token = ((ClaimResult.Acquired) store.claim(key("short"), FP, LEASE)).token();
		store.complete(key("short"), token, FP, RESULT, Duration.ofMillis(1));
		Thread.sleep(5);
		assertThat(store.claim(key("new"), FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void aRecordThatOutlivedASweepMakesRoomOnceItExpires() throws InterruptedException {
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(2);
		store.claim(key("outlives"), FP, Duration.ofMillis(100));
		store.claim(key("abandoned"), FP, Duration.ofMillis(1));
		Thread.sleep(5);
		// Full: a sweep removes the expired placeholder and keeps the one still held.
		assertThat(store.claim(key("live"), FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
		Thread.sleep(150);
		assertThat(store.claim(key("new"), FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void aFullStoreSweptByOneThreadNeverHangsAClaimOnAnother() throws Exception {
		// Past the regular sweep's cadence (1024 claims) and full time and again.
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(100, Duration.ZERO);
		fill(store, "first-");
		assertThat(CompletableFuture.runAsync(() -> fill(store, "second-"))).succeedsWithin(Duration.ofSeconds(20));
	}

	private static void fill(InMemoryIdempotencyStore store, String prefix) {
		for (int i = 0; i < 1100; i++) {
			try {
				store.claim(key(prefix + i), FP, Duration.ofMillis(1));
			}
			catch (InMemoryStoreFullException ex) {
				try {
					Thread.sleep(2);
				}
				catch (InterruptedException interrupted) {
					Thread.currentThread().interrupt();
					return;
				}
				store.claim(key(prefix + i), FP, Duration.ofMillis(1));
			}
		}
	}

	@Test
	void aScopeAtItsQuotaIsRefusedANewKeyWhileOtherScopesAreNot() {
		// A placeholder of these keys takes about 300 estimated bytes: two fit the quota.
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(100, 1024 * 1024, 700, Duration.ofHours(1));
		String first = ((ClaimResult.Acquired) store.claim(key("idem:alice:op:1"), FP, LEASE)).token();
		store.claim(key("idem:alice:op:2"), FP, LEASE);
		assertThatExceptionOfType(InMemoryStoreFullException.class)
			.isThrownBy(() -> store.claim(key("idem:alice:op:3"), FP, LEASE))
			.withMessageContaining("scope 'alice'");
		assertThat(store.claim(key("idem:bob:op:1"), FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
		store.release(key("idem:alice:op:1"), first);
		assertThat(store.claim(key("idem:alice:op:3"), FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
		assertThatExceptionOfType(InMemoryStoreFullException.class)
			.isThrownBy(() -> store.claim(key("idem:alice:op:4"), FP, LEASE));
	}

	@Test
	void hashedKeysShareOneQuota() {
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(100, 1024 * 1024, 700, Duration.ofHours(1));
		store.claim(key("idem:#:" + "a".repeat(16)), FP, LEASE);
		store.claim(key("idem:#:" + "b".repeat(16)), FP, LEASE);
		assertThatExceptionOfType(InMemoryStoreFullException.class)
			.isThrownBy(() -> store.claim(key("idem:#:" + "c".repeat(16)), FP, LEASE))
			.withMessageContaining("scope '#'");
		assertThat(store.claim(key("idem:alice:op:1"), FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void maximumBytesMustBePositive() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new InMemoryIdempotencyStore(1, 0, 1, DEFAULT_TAKEOVER_MEMORY))
			.withMessageContaining("idempotent.store.memory.maximum-size");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new InMemoryIdempotencyStore(1, 1, 0, DEFAULT_TAKEOVER_MEMORY))
			.withMessageContaining("idempotent.store.memory.maximum-size-per-scope");
		assertThatIllegalArgumentException().isThrownBy(() -> new InMemoryIdempotencyStore(1, Duration.ofSeconds(-1)))
			.withMessageContaining("takeoverMemory");
	}

	@Test
	void aPageOfNoRecordsIsRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.store.findInProgress("idem", LEASE, null, 0));
	}

	@Test
	void maximumRecordsMustBePositive() {
		assertThatIllegalArgumentException().isThrownBy(() -> new InMemoryIdempotencyStore(0))
			.withMessageContaining("idempotent.store.memory.maximum-records");
	}

}
