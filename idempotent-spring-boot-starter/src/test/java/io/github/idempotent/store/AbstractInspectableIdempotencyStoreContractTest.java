package io.github.idempotent.store;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import io.github.idempotent.store.InspectableIdempotencyStore.Deletion;
import io.github.idempotent.store.InspectableIdempotencyStore.InProgressPage;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store contract plus the inspection an operator uses
 * ({@link InspectableIdempotencyStore}): read one record, page through the records in
 * progress, delete one. A store's test extends this class instead of
 * {@link AbstractIdempotencyStoreContractTest} when the store can be inspected.
 */
public abstract class AbstractInspectableIdempotencyStoreContractTest extends AbstractIdempotencyStoreContractTest {

	private static final Fingerprint FP = new Fingerprint("q4kX1c0QwS6R8jVx2mJ0b3n7Zt5yHc9LpA1eD4fG6hI");

	private static final Fingerprint TEXT_FP = new Fingerprint("fp-text");

	protected InspectableIdempotencyStore inspectable() {
		return (InspectableIdempotencyStore) store();
	}

	/**
	 * A key prefix of this test's own, so that the listing sees only its records.
	 */
	protected String newPrefix() {
		return "idempotent-test-" + UUID.randomUUID();
	}

	@Test
	void anAbsentKeyHasNoRecord() {
		assertThat(inspectable().inspect(newKey())).isEmpty();
	}

	@Test
	void aRecordInProgressShowsItsClaimTimeAndLease() {
		RecordKey key = newKey();
		Instant before = Instant.now().truncatedTo(ChronoUnit.SECONDS);
		assertThat(store().claim(key, FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
		Instant after = Instant.now();
		IdempotencyRecord record = inspectable().inspect(key).orElseThrow();
		assertThat(record.key()).isEqualTo(key);
		assertThat(record.state()).isEqualTo(IdempotencyRecord.State.IN_PROGRESS);
		assertThat(record.fingerprint()).isEqualTo(FP);
		assertThat(record.claimedAt()).isBetween(before, after);
		assertThat(record.expiresIn()).isPositive().isLessThanOrEqualTo(LEASE);
		assertThat(record.result()).isNull();
	}

	@Test
	void aRecordInProgressWithATextFingerprintShowsItsClaimTime() {
		RecordKey key = newKey();
		Instant before = Instant.now().truncatedTo(ChronoUnit.SECONDS);
		store().claim(key, TEXT_FP, LEASE);
		IdempotencyRecord record = inspectable().inspect(key).orElseThrow();
		assertThat(record.fingerprint()).isEqualTo(TEXT_FP);
		assertThat(record.claimedAt()).isBetween(before, Instant.now());
	}

	@Test
	void aCompletedRecordShowsItsResultAndTimeToExpiry() {
		RecordKey key = newKey();
		String token = ((ClaimResult.Acquired) store().claim(key, FP, LEASE)).token();
		StoredResult result = new StoredResult(new byte[] { 'V', '4', '2' });
		assertThat(store().complete(key, token, FP, result, TTL)).isTrue();
		IdempotencyRecord record = inspectable().inspect(key).orElseThrow();
		assertThat(record.state()).isEqualTo(IdempotencyRecord.State.COMPLETED);
		assertThat(record.fingerprint()).isEqualTo(FP);
		assertThat(record.result()).isEqualTo(result);
		assertThat(record.expiresIn()).isGreaterThan(LEASE).isLessThanOrEqualTo(TTL);
	}

	@Test
	void aReleasedRecordIsGone() {
		RecordKey key = newKey();
		String token = ((ClaimResult.Acquired) store().claim(key, FP, LEASE)).token();
		store().release(key, token);
		assertThat(inspectable().inspect(key)).isEmpty();
	}

	@Test
	void theListingPagesThroughTheRecordsInProgressUnderThePrefixOnly() {
		String prefix = newPrefix();
		Set<RecordKey> inProgress = new HashSet<>();
		for (int i = 0; i < 7; i++) {
			RecordKey key = new RecordKey(prefix + ":_:op:" + i);
			store().claim(key, FP, LEASE);
			inProgress.add(key);
		}
		RecordKey completed = new RecordKey(prefix + ":_:op:done");
		String token = ((ClaimResult.Acquired) store().claim(completed, FP, LEASE)).token();
		store().complete(completed, token, FP, new StoredResult(new byte[] { 1 }), TTL);
		RecordKey otherPrefix = new RecordKey(prefix + "x:_:op:1");
		store().claim(otherPrefix, FP, LEASE);

		List<IdempotencyRecord> found = listAll(prefix, Duration.ZERO, 3);
		assertThat(found).extracting(IdempotencyRecord::key).containsExactlyInAnyOrderElementsOf(inProgress);
		assertThat(found).allSatisfy((record) -> {
			assertThat(record.state()).isEqualTo(IdempotencyRecord.State.IN_PROGRESS);
			assertThat(record.claimedAt()).isNotNull();
			assertThat(record.fingerprint()).isEqualTo(FP);
		});
	}

	@Test
	void theListingLeavesOutRecordsClaimedMoreRecentlyThanAsked() {
		String prefix = newPrefix();
		store().claim(new RecordKey(prefix + ":_:op:fresh"), FP, LEASE);
		assertThat(listAll(prefix, Duration.ofHours(1), 10)).isEmpty();
		assertThat(listAll(prefix, Duration.ZERO, 10)).hasSize(1);
	}

	@Test
	void deletingACompletedRecordLetsTheNextClaimAcquireTheKey() {
		RecordKey key = newKey();
		String token = ((ClaimResult.Acquired) store().claim(key, FP, LEASE)).token();
		store().complete(key, token, FP, new StoredResult(new byte[] { 1 }), TTL);
		// A caching store has the result in its cache now: the deletion must leave it
		// too.
		assertThat(store().claim(key, FP, LEASE)).isInstanceOf(ClaimResult.Completed.class);
		assertThat(inspectable().delete(key)).isTrue();
		assertThat(inspectable().inspect(key)).isEmpty();
		assertThat(store().claim(key, FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void aClaimAfterAForcedDeleteKnowsThatItTakesOverAnAttempt() {
		RecordKey key = newKey();
		Instant before = Instant.now().truncatedTo(ChronoUnit.SECONDS);
		String stuck = ((ClaimResult.Acquired) store().claim(key, FP, LEASE)).token();
		Instant after = Instant.now();
		assertThat(inspectable().deleteInProgress(key)).isEqualTo(Deletion.DELETED);
		ClaimResult.Acquired retry = (ClaimResult.Acquired) store().claim(key, FP, LEASE);
		assertThat(retry.attempt()).isEqualTo(2);
		assertThat(retry.previousAttemptStartedAt()).isNotNull().isBetween(before, after);
		assertThat(store().complete(key, stuck, FP, new StoredResult(new byte[] { 1 }), TTL)).isFalse();
	}

	@Test
	void deletingARecordInProgressFencesItsOwnerOnceAnotherClaimsTheKey() {
		RecordKey key = newKey();
		String stuck = ((ClaimResult.Acquired) store().claim(key, FP, LEASE)).token();
		assertThat(inspectable().delete(key)).isTrue();
		String retry = ((ClaimResult.Acquired) store().claim(key, FP, LEASE)).token();
		StoredResult result = new StoredResult(new byte[] { 2 });
		assertThat(store().complete(key, retry, FP, result, TTL)).isTrue();
		assertThat(store().complete(key, stuck, FP, new StoredResult(new byte[] { 1 }), TTL)).isFalse();
		assertThat(store().claim(key, FP, LEASE)).isEqualTo(new ClaimResult.Completed(FP, result));
	}

	@Test
	void deletingAnAbsentKeyReportsThatThereWasNone() {
		assertThat(inspectable().delete(newKey())).isFalse();
	}

	@Test
	void deletingUnlessHeldLeavesACallInProgressToItsOwner() {
		RecordKey key = newKey();
		String owner = ((ClaimResult.Acquired) store().claim(key, FP, LEASE)).token();
		assertThat(inspectable().deleteUnlessHeld(key)).isEqualTo(Deletion.HELD);
		assertThat(store().claim(key, FP, LEASE)).isInstanceOf(ClaimResult.InProgress.class);
		StoredResult result = new StoredResult(new byte[] { 3 });
		assertThat(store().complete(key, owner, FP, result, TTL)).isTrue();
		// Cached by a caching store now: the deletion must leave the cache too.
		assertThat(store().claim(key, FP, LEASE)).isEqualTo(new ClaimResult.Completed(FP, result));
		assertThat(inspectable().deleteUnlessHeld(key)).isEqualTo(Deletion.DELETED);
		assertThat(inspectable().inspect(key)).isEmpty();
		assertThat(store().claim(key, FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void deletingUnlessHeldTakesARecordWhoseLeaseRanOut() throws InterruptedException {
		RecordKey key = newKey();
		store().claim(key, FP, Duration.ofMillis(200));
		Deletion deletion = inspectable().deleteUnlessHeld(key);
		for (int polls = 0; deletion == Deletion.HELD && polls < 100; polls++) {
			Thread.sleep(50);
			deletion = inspectable().deleteUnlessHeld(key);
		}
		// Deleted, or already gone where the store expires records by itself.
		assertThat(deletion).isIn(Deletion.DELETED, Deletion.NONE);
		assertThat(inspectable().inspect(key)).isEmpty();
		assertThat(store().claim(key, FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void deletingInProgressTakesAHeldClaimButKeepsAResult() {
		RecordKey key = newKey();
		String stuck = ((ClaimResult.Acquired) store().claim(key, FP, LEASE)).token();
		assertThat(inspectable().deleteInProgress(key)).isEqualTo(Deletion.DELETED);
		String retry = ((ClaimResult.Acquired) store().claim(key, FP, LEASE)).token();
		StoredResult result = new StoredResult(new byte[] { 4 });
		assertThat(store().complete(key, retry, FP, result, TTL)).isTrue();
		assertThat(store().complete(key, stuck, FP, new StoredResult(new byte[] { 5 }), TTL)).isFalse();
		assertThat(store().claim(key, FP, LEASE)).isEqualTo(new ClaimResult.Completed(FP, result));
		assertThat(inspectable().deleteInProgress(key)).isEqualTo(Deletion.COMPLETED);
		assertThat(store().claim(key, FP, LEASE)).isEqualTo(new ClaimResult.Completed(FP, result));
		assertThat(inspectable().deleteInProgress(newKey())).isEqualTo(Deletion.NONE);
	}

	@Test
	void aForcedDeleteFencesTheOwnersRenewalSoItCannotWriteTheRecordBack() {
		RecordKey key = newKey();
		String hung = ((ClaimResult.Acquired) store().claim(key, FP, LEASE)).token();
		assertThat(inspectable().deleteInProgress(key)).isEqualTo(Deletion.DELETED);
		// The owner is alive and renews: a vanished record would be written anew, a
		// deleted one must not be.
		assertThat(store().renew(key, hung, FP, LEASE)).isFalse();
		assertThat(inspectable().inspect(key)).isEmpty();
		assertThat(store().complete(key, hung, FP, new StoredResult(new byte[] { 6 }), TTL)).isFalse();
		assertThat(store().release(key, hung)).isFalse();
		assertThat(store().renew(key, hung, FP, LEASE)).isFalse();
		String retry = ((ClaimResult.Acquired) store().claim(key, FP, LEASE)).token();
		assertThat(store().renew(key, hung, FP, LEASE)).isFalse();
		StoredResult result = new StoredResult(new byte[] { 7 });
		assertThat(store().complete(key, retry, FP, result, TTL)).isTrue();
		assertThat(store().complete(key, hung, FP, new StoredResult(new byte[] { 8 }), TTL)).isFalse();
		assertThat(store().claim(key, FP, LEASE)).isEqualTo(new ClaimResult.Completed(FP, result));
	}

	@Test
	void aForcedDeleteIsNeitherListedNorReadNorDeletedAgain() {
		String prefix = newPrefix();
		RecordKey key = new RecordKey(prefix + ":_:op:hung");
		String hung = ((ClaimResult.Acquired) store().claim(key, TEXT_FP, LEASE)).token();
		assertThat(inspectable().deleteInProgress(key)).isEqualTo(Deletion.DELETED);
		assertThat(listAll(prefix, Duration.ZERO, 10)).isEmpty();
		assertThat(inspectable().inspect(key)).isEmpty();
		assertThat(inspectable().deleteInProgress(key)).isEqualTo(Deletion.NONE);
		assertThat(inspectable().deleteUnlessHeld(key)).isEqualTo(Deletion.NONE);
		// Still fenced after the operator's second and third tries.
		assertThat(store().renew(key, hung, TEXT_FP, LEASE)).isFalse();
		assertThat(store().claim(key, TEXT_FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void aRecordThatVanishedWithoutADeleteIsStillWrittenAnewByItsOwner() throws InterruptedException {
		RecordKey key = newKey();
		String paused = ((ClaimResult.Acquired) store().claim(key, FP, Duration.ofMillis(100))).token();
		Thread.sleep(300);
		// No forced delete, no rival: the owner that outlived its lease keeps the key.
		assertThat(store().renew(key, paused, FP, LEASE)).isTrue();
		assertThat(store().claim(key, FP, LEASE)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(inspectable().deleteInProgress(key)).isEqualTo(Deletion.DELETED);
		assertThat(store().renew(key, paused, FP, LEASE)).isFalse();
	}

	@Test
	void deletingUnlessHeldReportsThatThereWasNone() {
		assertThat(inspectable().deleteUnlessHeld(newKey())).isEqualTo(Deletion.NONE);
	}

	protected List<IdempotencyRecord> listAll(String prefix, Duration olderThan, int limit) {
		List<IdempotencyRecord> found = new ArrayList<>();
		String cursor = null;
		// Bounded: a Redis SCAN walks the whole key space, a page at a time.
		for (int pages = 0; pages < 100_000; pages++) {
			InProgressPage page = inspectable().findInProgress(prefix, olderThan, cursor, limit);
			found.addAll(page.records());
			cursor = page.cursor();
			if (cursor == null) {
				return found;
			}
		}
		throw new AssertionError("The listing did not end");
	}

}
