package io.github.idempotent.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.testsupport.GoldenRecords;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Record format 1 on Redis, frozen with the first release: the golden Redis records, put
 * in Redis as they are with the expiry the format gives them, are read by this build's
 * store as what they recorded (a call in progress and its lease, a completed call and its
 * outcome, a tombstone taken over), and this build writes them byte for byte. The
 * outcomes inside are {@code RecordFormat1Tests}'.
 */
class RedisRecordFormat1Tests {

	private static final Fingerprint DIGEST = new Fingerprint("q4kX1c0QwS6R8jVx2mJ0b3n7Zt5yHc9LpA1eD4fG6hI");

	private static final Fingerprint TEXT = new Fingerprint("fp-text");

	private static final byte[] TOKEN = RecordLayout.token("0123456789abcdef");

	private static final Instant CLAIMED = Instant.parse("2026-12-02T17:00:00Z");

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static LettuceConnectionFactory connectionFactory;

	private static RedisIdempotencyStore store;

	@BeforeAll
	static void connect() {
		connectionFactory = TestRedis.connectionFactory();
		store = new RedisIdempotencyStore(connectionFactory);
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Test
	void aPlaceholderIsACallInProgressForTheLeaseItsExpiryLeaves() {
		byte[] golden = GoldenRecords.read("redis-in-progress");
		assertThat(RecordLayout.inProgress(TOKEN, DIGEST, CLAIMED.getEpochSecond(), 2,
				CLAIMED.minusSeconds(60).getEpochSecond()))
			.isEqualTo(golden);
		Instant now = CLAIMED.plusSeconds(5);
		assertThat(RecordLayout.claimedAt(golden, now)).isEqualTo(CLAIMED);
		assertThat(RecordLayout.attempt(golden)).isEqualTo(2);
		assertThat(RecordLayout.previousClaimedAt(golden, now)).isEqualTo(CLAIMED.minusSeconds(60));

		RecordKey key = put(golden, Duration.ofSeconds(60).plus(RecordLayout.REMEMBERED));
		ClaimResult claim = store.claim(key, DIGEST, LEASE);
		assertThat(claim).isInstanceOfSatisfying(ClaimResult.InProgress.class, (inProgress) -> {
			assertThat(inProgress.fingerprint()).isEqualTo(DIGEST);
			assertThat(inProgress.leaseRemaining()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(60));
		});
	}

	@Test
	void aPlaceholderPastItsLeaseIsTakenOverAsTheNextAttempt() {
		RecordKey key = put(GoldenRecords.read("redis-in-progress"), RecordLayout.REMEMBERED.minusSeconds(1));
		assertThat(store.claim(key, DIGEST, LEASE)).isInstanceOfSatisfying(ClaimResult.Acquired.class,
				(acquired) -> assertThat(acquired.attempt()).isEqualTo(3));
	}

	@Test
	void aPlaceholderWithATextFingerprintIsACallInProgress() {
		byte[] golden = GoldenRecords.read("redis-in-progress-text-fingerprint");
		assertThat(RecordLayout.inProgress(TOKEN, TEXT, CLAIMED.getEpochSecond())).isEqualTo(golden);
		RecordKey key = put(golden, Duration.ofSeconds(60).plus(RecordLayout.REMEMBERED));
		assertThat(store.claim(key, TEXT, LEASE)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(store.claim(key, DIGEST, LEASE)).isInstanceOfSatisfying(ClaimResult.InProgress.class,
				(inProgress) -> assertThat(inProgress.fingerprint()).isEqualTo(TEXT));
	}

	@Test
	void aCompletedRecordReplaysItsOutcome() {
		byte[] golden = GoldenRecords.read("redis-completed");
		byte[] outcome = GoldenRecords.read("json-response");
		assertThat(RecordLayout.record(RecordLayout.COMPLETED, TOKEN, DIGEST, outcome)).isEqualTo(golden);
		RecordKey key = put(golden, Duration.ofMinutes(5));
		assertThat(store.claim(key, DIGEST, LEASE))
			.isEqualTo(new ClaimResult.Completed(DIGEST, new StoredResult(outcome)));
	}

	@Test
	void aCompletedRecordWithATextFingerprintReplaysItsOutcome() {
		byte[] golden = GoldenRecords.read("redis-completed-text-fingerprint");
		byte[] outcome = GoldenRecords.read("not-stored");
		assertThat(RecordLayout.record(RecordLayout.COMPLETED, TOKEN, TEXT, outcome)).isEqualTo(golden);
		RecordKey key = put(golden, Duration.ofMinutes(5));
		assertThat(store.claim(key, TEXT, LEASE)).isEqualTo(new ClaimResult.Completed(TEXT, new StoredResult(outcome)));
	}

	@Test
	void aTombstoneIsTakenOverAsTheAttemptAfterTheDeletedOne() {
		byte[] golden = GoldenRecords.read("redis-tombstone");
		assertThat(RecordLayoutTests.tombstone(CLAIMED.getEpochSecond(), 2)).isEqualTo(golden);
		RecordKey key = put(golden, Duration.ofMinutes(5));
		assertThat(store.claim(key, DIGEST, LEASE)).isInstanceOfSatisfying(ClaimResult.Acquired.class,
				(acquired) -> assertThat(acquired.attempt()).isEqualTo(3));
	}

	private static RecordKey put(byte[] value, Duration expiry) {
		RecordKey key = new RecordKey("idempotent-test:format-1:" + UUID.randomUUID());
		try (RedisConnection connection = connectionFactory.getConnection()) {
			connection.stringCommands().pSetEx(key.value().getBytes(StandardCharsets.UTF_8), expiry.toMillis(), value);
		}
		return key;
	}

}
