package io.github.idempotent.store;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.awaitility.Awaitility.await;

/**
 * The semantics every {@link IdempotencyStore} must have. A store's test extends this
 * class and supplies the store; each test works on keys of its own, so the class runs
 * against a shared server.
 */
public abstract class AbstractIdempotencyStoreContractTest {

	protected static final Duration LEASE = Duration.ofSeconds(30);

	protected static final Duration TTL = Duration.ofMinutes(10);

	private static final Fingerprint FP = new Fingerprint("fp-1");

	private IdempotencyStore store;

	protected abstract IdempotencyStore createStore();

	protected void destroyStore(IdempotencyStore store) {
	}

	@BeforeEach
	void setUpStore() {
		this.store = createStore();
	}

	@AfterEach
	void tearDownStore() {
		destroyStore(this.store);
	}

	protected IdempotencyStore store() {
		return this.store;
	}

	protected RecordKey newKey() {
		return new RecordKey("idempotent-test:" + getClass().getSimpleName() + ":" + UUID.randomUUID());
	}

	@Test
	void claimOfAnAbsentKeyAcquiresIt() {
		ClaimResult result = this.store.claim(newKey(), FP, LEASE);
		assertThat(result).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(((ClaimResult.Acquired) result).token()).isNotBlank();
	}

	@Test
	void claimOfAKeyInProgressReportsItsFingerprintAndLease() {
		RecordKey key = newKey();
		acquire(key);
		ClaimResult second = this.store.claim(key, new Fingerprint("other"), LEASE);
		assertThat(second).isInstanceOf(ClaimResult.InProgress.class);
		ClaimResult.InProgress inProgress = (ClaimResult.InProgress) second;
		assertThat(inProgress.fingerprint()).isEqualTo(FP);
		assertThat(inProgress.leaseRemaining()).isPositive().isLessThanOrEqualTo(LEASE);
	}

	@Test
	void asynchronousCallsKeepTheSameContract() throws Exception {
		assumeTrue(this.store instanceof AsyncIdempotencyStore async && async.supportsAsync(),
				"the store has no asynchronous calls of its own");
		AsyncIdempotencyStore async = (AsyncIdempotencyStore) this.store;
		RecordKey key = newKey();
		ClaimResult first = async.claimAsync(key, FP, LEASE).toCompletableFuture().get(10, TimeUnit.SECONDS);
		assertThat(first).isInstanceOf(ClaimResult.Acquired.class);
		ClaimResult second = async.claimAsync(key, FP, LEASE).toCompletableFuture().get(10, TimeUnit.SECONDS);
		assertThat(second).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(((ClaimResult.InProgress) second).fingerprint()).isEqualTo(FP);
		assertThat(((ClaimResult.InProgress) second).leaseRemaining()).isPositive().isLessThanOrEqualTo(LEASE);
		StoredResult result = new StoredResult(new byte[] { 7 });
		String token = ((ClaimResult.Acquired) first).token();
		assertThat(async.completeAsync(key, token, FP, result, TTL).toCompletableFuture().get(10, TimeUnit.SECONDS))
			.isTrue();
		assertThat(async.claimAsync(key, FP, LEASE).toCompletableFuture().get(10, TimeUnit.SECONDS))
			.isEqualTo(new ClaimResult.Completed(FP, result));
		RecordKey released = newKey();
		String owner = ((ClaimResult.Acquired) async.claimAsync(released, FP, LEASE)
			.toCompletableFuture()
			.get(10, TimeUnit.SECONDS)).token();
		assertThat(async.releaseAsync(released, owner).toCompletableFuture().get(10, TimeUnit.SECONDS)).isTrue();
		assertThat(async.claimAsync(released, FP, LEASE).toCompletableFuture().get(10, TimeUnit.SECONDS))
			.isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void completedKeyReturnsTheStoredResultAndFingerprint() {
		RecordKey key = newKey();
		String token = acquire(key);
		StoredResult result = new StoredResult(new byte[] { 'V', '4', '2' });
		assertThat(this.store.complete(key, token, FP, result, TTL)).isTrue();
		ClaimResult again = this.store.claim(key, FP, LEASE);
		assertThat(again).isEqualTo(new ClaimResult.Completed(FP, result));
	}

	@Test
	void resultBytesRoundTripExactly() {
		RecordKey key = newKey();
		String token = acquire(key);
		byte[] bytes = new byte[256 * 64];
		for (int i = 0; i < bytes.length; i++) {
			bytes[i] = (byte) i;
		}
		this.store.complete(key, token, FP, new StoredResult(bytes), TTL);
		ClaimResult.Completed completed = (ClaimResult.Completed) this.store.claim(key, FP, LEASE);
		assertThat(completed.result().bytes()).isEqualTo(bytes);
	}

	@Test
	void emptyResultRoundTrips() {
		RecordKey key = newKey();
		String token = acquire(key);
		this.store.complete(key, token, FP, new StoredResult(new byte[0]), TTL);
		ClaimResult.Completed completed = (ClaimResult.Completed) this.store.claim(key, FP, LEASE);
		assertThat(completed.result().bytes()).isEmpty();
	}

	@Test
	void releaseLetsTheNextClaimAcquire() {
		RecordKey key = newKey();
		String token = acquire(key);
		assertThat(this.store.release(key, token)).isTrue();
		assertThat(this.store.claim(key, FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void onlyTheOwnerCanCompleteReleaseOrRenew() {
		RecordKey key = newKey();
		String token = acquire(key);
		assertThat(this.store.complete(key, "not-the-owner", FP, new StoredResult(new byte[] { 1 }), TTL)).isFalse();
		assertThat(this.store.release(key, "not-the-owner")).isFalse();
		assertThat(this.store.renew(key, "not-the-owner", FP, LEASE)).isFalse();
		assertThat(this.store.claim(key, FP, LEASE)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(this.store.renew(key, token, FP, LEASE)).isTrue();
	}

	@Test
	void theSameCompletionSentAgainSucceeds() {
		// The executor sends a completion again when the first one's answer was lost
		// (a cut connection): the first may have landed, and that is not a lost lease.
		RecordKey key = newKey();
		String token = acquire(key);
		StoredResult result = new StoredResult(new byte[] { 4, 2 });
		assertThat(this.store.complete(key, token, FP, result, TTL)).isTrue();
		assertThat(this.store.complete(key, token, FP, result, TTL)).isTrue();
		assertThat(this.store.complete(key, token, new Fingerprint("other"), result, TTL)).isFalse();
		assertThat(this.store.claim(key, FP, LEASE)).isEqualTo(new ClaimResult.Completed(FP, result));
	}

	@Test
	void theSameReleaseSentAgainSucceeds() {
		RecordKey key = newKey();
		String token = acquire(key);
		assertThat(this.store.release(key, token)).isTrue();
		assertThat(this.store.release(key, token)).isTrue();
	}

	@Test
	void aCompletedRecordCannotBeReleasedRenewedOrCompletedAgain() {
		RecordKey key = newKey();
		String token = acquire(key);
		StoredResult result = new StoredResult(new byte[] { 1, 2, 3 });
		this.store.complete(key, token, FP, result, TTL);
		assertThat(this.store.release(key, token)).isFalse();
		// Its owner's renewal, between the attempts of a completion whose reply was lost,
		// finds the key still its own (not taken over), and changes nothing.
		assertThat(this.store.renew(key, token, FP, LEASE)).isTrue();
		assertThat(this.store.renew(key, acquire(newKey()), FP, LEASE)).isFalse();
		assertThat(this.store.complete(key, token, FP, new StoredResult(new byte[] { 9 }), TTL)).isFalse();
		assertThat(this.store.claim(key, FP, LEASE)).isEqualTo(new ClaimResult.Completed(FP, result));
	}

	@Test
	void anOwnerPastItsLeaseWhomNobodyTookOverCompletes() throws InterruptedException {
		RecordKey key = newKey();
		String token = ((ClaimResult.Acquired) this.store.claim(key, FP, Duration.ofMillis(200))).token();
		Thread.sleep(500);
		StoredResult result = new StoredResult(new byte[] { 'V', '1' });
		assertThat(this.store.complete(key, token, FP, result, TTL)).isTrue();
		assertThat(this.store.claim(key, new Fingerprint("other"), LEASE))
			.isEqualTo(new ClaimResult.Completed(FP, result));
	}

	@Test
	void anOwnerPastItsLeaseWhomNobodyTookOverRenewsAndKeepsTheKey() throws InterruptedException {
		RecordKey key = newKey();
		String token = ((ClaimResult.Acquired) this.store.claim(key, FP, Duration.ofMillis(200))).token();
		Thread.sleep(500);
		assertThat(this.store.renew(key, token, FP, LEASE)).isTrue();
		ClaimResult duplicate = this.store.claim(key, FP, LEASE);
		assertThat(duplicate).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(((ClaimResult.InProgress) duplicate).fingerprint()).isEqualTo(FP);
		StoredResult result = new StoredResult(new byte[] { 'V', '2' });
		assertThat(this.store.complete(key, token, FP, result, TTL)).isTrue();
		assertThat(this.store.claim(key, FP, LEASE)).isEqualTo(new ClaimResult.Completed(FP, result));
	}

	@Test
	void anOwnerPastItsLeaseWhomNobodyTookOverReleases() throws InterruptedException {
		RecordKey key = newKey();
		String token = ((ClaimResult.Acquired) this.store.claim(key, FP, Duration.ofMillis(200))).token();
		Thread.sleep(500);
		assertThat(this.store.release(key, token)).isTrue();
		assertThat(this.store.claim(key, FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void anOwnerWhoseRecordVanishedWritesItAnew() {
		RecordKey key = newKey();
		StoredResult result = new StoredResult(new byte[] { 1 });
		assertThat(this.store.release(key, "token")).isTrue();
		assertThat(this.store.complete(key, "token", FP, result, TTL)).isTrue();
		assertThat(this.store.claim(key, new Fingerprint("other"), LEASE))
			.isEqualTo(new ClaimResult.Completed(FP, result));
	}

	@Test
	void anExpiredLeaseLetsANewOwnerInAndFencesTheOldOne() {
		RecordKey key = newKey();
		String crashed = ((ClaimResult.Acquired) this.store.claim(key, FP, Duration.ofMillis(300))).token();
		String[] next = new String[1];
		await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(50)).until(() -> {
			ClaimResult result = this.store.claim(key, FP, LEASE);
			if (result instanceof ClaimResult.Acquired acquired) {
				next[0] = acquired.token();
				return true;
			}
			return false;
		});
		assertThat(next[0]).isNotEqualTo(crashed);
		// The old owner wakes up: none of its writes may touch the new owner's record.
		assertThat(this.store.complete(key, crashed, FP, new StoredResult(new byte[] { 'X' }), TTL)).isFalse();
		assertThat(this.store.release(key, crashed)).isFalse();
		assertThat(this.store.renew(key, crashed, FP, LEASE)).isFalse();
		assertThat(this.store.claim(key, FP, LEASE)).isInstanceOf(ClaimResult.InProgress.class);
		StoredResult result = new StoredResult(new byte[] { 'O', 'K' });
		assertThat(this.store.complete(key, next[0], FP, result, TTL)).isTrue();
		assertThat(this.store.claim(key, FP, LEASE)).isEqualTo(new ClaimResult.Completed(FP, result));
	}

	@Test
	void aFreshClaimIsTheFirstAttempt() {
		ClaimResult.Acquired acquired = (ClaimResult.Acquired) this.store.claim(newKey(), FP, LEASE);
		assertThat(acquired.attempt()).isEqualTo(1);
		assertThat(acquired.isTakeover()).isFalse();
		assertThat(acquired.previousAttemptStartedAt()).isNull();
	}

	@Test
	void aClaimThatTakesOverAnExpiredLeaseKnowsWhichAttemptItIsAndWhenTheLastStarted() throws Exception {
		RecordKey key = newKey();
		Instant before = Instant.now().truncatedTo(ChronoUnit.SECONDS);
		ClaimResult.Acquired first = (ClaimResult.Acquired) this.store.claim(key, FP, Duration.ofMillis(300));
		Instant after = Instant.now();
		ClaimResult.Acquired second = takeOver(key, Duration.ofMillis(300), false);
		assertThat(second.token()).isNotEqualTo(first.token());
		assertThat(second.attempt()).isEqualTo(2);
		assertThat(second.previousAttemptStartedAt()).isNotNull().isBetween(before, after);
		ClaimResult.Acquired third = takeOver(key, LEASE, true);
		assertThat(third.attempt()).isEqualTo(3);
		assertThat(third.previousAttemptStartedAt()).isNotNull().isAfterOrEqualTo(before);
		StoredResult result = new StoredResult(new byte[] { 'O', 'K' });
		assertThat(this.store.complete(key, third.token(), FP, result, TTL)).isTrue();
		assertThat(this.store.claim(key, FP, LEASE)).isEqualTo(new ClaimResult.Completed(FP, result));
	}

	/**
	 * Claims {@code key} once its lease has run out, asynchronously when asked and the
	 * store has asynchronous calls of its own.
	 */
	private ClaimResult.Acquired takeOver(RecordKey key, Duration lease, boolean async) {
		ClaimResult.Acquired[] acquired = new ClaimResult.Acquired[1];
		await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(50)).until(() -> {
			ClaimResult result = (async && this.store instanceof AsyncIdempotencyStore store && store.supportsAsync())
					? store.claimAsync(key, FP, lease).toCompletableFuture().get(10, TimeUnit.SECONDS)
					: this.store.claim(key, FP, lease);
			if (result instanceof ClaimResult.Acquired claimed) {
				acquired[0] = claimed;
				return true;
			}
			return false;
		});
		return acquired[0];
	}

	@Test
	void aClaimAfterAReleaseIsTheFirstAttemptAgain() {
		RecordKey key = newKey();
		String token = ((ClaimResult.Acquired) this.store.claim(key, FP, LEASE)).token();
		assertThat(this.store.release(key, token)).isTrue();
		ClaimResult.Acquired next = (ClaimResult.Acquired) this.store.claim(key, FP, LEASE);
		assertThat(next.attempt()).isEqualTo(1);
		assertThat(next.previousAttemptStartedAt()).isNull();
	}

	@Test
	void aReleaseOfATakeoverStillTellsTheNextClaimItTakesOver() {
		// Attempt 2 took over a call that never finished and threw (its lookup of what
		// attempt 1 did failed): its release must not erase that attempt 1 never
		// finished, or the retry runs as attempt 1 and repeats attempt 1's side effects.
		RecordKey key = newKey();
		this.store.claim(key, FP, Duration.ofMillis(300));
		ClaimResult.Acquired second = takeOver(key, LEASE, false);
		assertThat(second.attempt()).isEqualTo(2);
		assertThat(this.store.release(key, second.token())).isTrue();
		ClaimResult.Acquired third = (ClaimResult.Acquired) this.store.claim(key, FP, LEASE);
		assertThat(third.attempt()).isEqualTo(3);
		assertThat(third.isTakeover()).isTrue();
		assertThat(third.previousAttemptStartedAt()).isNotNull();
		// The released owner stays fenced; the new one completes.
		assertThat(this.store.renew(key, second.token(), FP, LEASE)).isFalse();
		assertThat(this.store.complete(key, second.token(), FP, new StoredResult(new byte[] { 'X' }), TTL)).isFalse();
		StoredResult result = new StoredResult(new byte[] { 'O', 'K' });
		assertThat(this.store.complete(key, third.token(), FP, result, TTL)).isTrue();
		assertThat(this.store.claim(key, FP, LEASE)).isEqualTo(new ClaimResult.Completed(FP, result));
	}

	@Test
	void renewalKeepsALeaseAlive() throws InterruptedException {
		RecordKey key = newKey();
		String token = ((ClaimResult.Acquired) this.store.claim(key, FP, Duration.ofMillis(400))).token();
		assertThat(this.store.renew(key, token, FP, Duration.ofSeconds(30))).isTrue();
		Thread.sleep(800);
		assertThat(this.store.claim(key, FP, LEASE)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(this.store.complete(key, token, FP, new StoredResult(new byte[] { 1 }), TTL)).isTrue();
	}

	@Test
	void aCompletedResultExpiresAfterItsTtl() {
		RecordKey key = newKey();
		String token = acquire(key);
		this.store.complete(key, token, FP, new StoredResult(new byte[] { 1 }), Duration.ofMillis(300));
		assertThat(this.store.claim(key, FP, LEASE)).isInstanceOf(ClaimResult.Completed.class);
		await().atMost(Duration.ofSeconds(5))
			.pollInterval(Duration.ofMillis(50))
			.until(() -> this.store.claim(key, FP, LEASE) instanceof ClaimResult.Acquired);
	}

	@Test
	void keysAreIndependent() {
		RecordKey first = newKey();
		RecordKey second = newKey();
		acquire(first);
		assertThat(this.store.claim(second, FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void aStormOfClaimsOnOneKeyHasExactlyOneWinner() throws Exception {
		int threads = 64;
		for (int round = 0; round < 5; round++) {
			RecordKey key = newKey();
			ExecutorService pool = Executors.newFixedThreadPool(threads);
			try {
				CountDownLatch start = new CountDownLatch(1);
				List<Future<ClaimResult>> futures = new ArrayList<>();
				for (int i = 0; i < threads; i++) {
					futures.add(pool.submit(() -> {
						start.await();
						return this.store.claim(key, FP, LEASE);
					}));
				}
				start.countDown();
				int acquired = 0;
				int inProgress = 0;
				for (Future<ClaimResult> future : futures) {
					ClaimResult result = future.get(30, TimeUnit.SECONDS);
					if (result instanceof ClaimResult.Acquired) {
						acquired++;
					}
					else if (result instanceof ClaimResult.InProgress) {
						inProgress++;
					}
				}
				assertThat(acquired).as("claims that won, round %d", round).isEqualTo(1);
				assertThat(inProgress).isEqualTo(threads - 1);
			}
			finally {
				pool.shutdownNow();
			}
		}
	}

	private String acquire(RecordKey key) {
		ClaimResult result = this.store.claim(key, FP, LEASE);
		assertThat(result).isInstanceOf(ClaimResult.Acquired.class);
		return ((ClaimResult.Acquired) result).token();
	}

}
