package io.github.idempotent.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.AbstractInspectableIdempotencyStoreContractTest;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

class RedisIdempotencyStoreTests extends AbstractInspectableIdempotencyStoreContractTest {

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = TestRedis.connectionFactory();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Override
	protected IdempotencyStore createStore() {
		return new RedisIdempotencyStore(connectionFactory);
	}

	@Test
	void theSameCompletionSentAgainByItsOwnerSucceedsAndChangesNothing() {
		// Lettuce sends a command again when its connection broke before the reply: the
		// first send may have completed the record already.
		Fingerprint fp = new Fingerprint("fp");
		RecordKey key = newKey();
		String token = ((ClaimResult.Acquired) store().claim(key, fp, LEASE)).token();
		StoredResult result = new StoredResult(new byte[] { 1, 2, 3 });
		assertThat(store().complete(key, token, fp, result, TTL)).isTrue();
		assertThat(store().complete(key, token, fp, result, TTL)).isTrue();
		assertThat(store().complete(key, token, fp, new StoredResult(new byte[] { 4 }), TTL)).isFalse();
		assertThat(store().complete(key, "another-owner", fp, result, TTL)).isFalse();
		assertThat(store().claim(key, fp, LEASE)).isEqualTo(new ClaimResult.Completed(fp, result));
	}

	@Test
	void anInProgressRecordWrittenWithoutAClaimTimeIsReadAndListedWithItsAgeUnknown() {
		// The layout before the claim time: nothing after the fingerprint.
		Fingerprint fp = new Fingerprint("q4kX1c0QwS6R8jVx2mJ0b3n7Zt5yHc9LpA1eD4fG6hI");
		String prefix = newPrefix();
		RecordKey key = new RecordKey(prefix + ":_:op:old");
		byte[] record = RecordLayout.record(RecordLayout.IN_PROGRESS,
				RecordLayout.token(RedisIdempotencyStore.newToken()), fp, null);
		try (RedisConnection connection = connectionFactory.getConnection()) {
			connection.stringCommands().pSetEx(key.value().getBytes(StandardCharsets.UTF_8), LEASE.toMillis(), record);
		}
		IdempotencyRecord read = inspectable().inspect(key).orElseThrow();
		assertThat(read.state()).isEqualTo(IdempotencyRecord.State.IN_PROGRESS);
		assertThat(read.fingerprint()).isEqualTo(fp);
		assertThat(read.claimedAt()).isNull();
		assertThat(listAll(prefix, Duration.ofHours(1), 100)).extracting(IdempotencyRecord::key).containsExactly(key);
		assertThat(store().claim(key, fp, LEASE)).isInstanceOf(ClaimResult.InProgress.class);
	}

	@Test
	void aForcedDeleteOfADamagedValueInProgressFreesTheKeyWithoutLeavingAnotherDamagedValue() {
		// 'P' and too few bytes for a token: the tombstone would be 'D' and what follows,
		// which is no tombstone either, so the key would stay damaged for the lease.
		RecordKey key = newKey();
		try (RedisConnection connection = connectionFactory.getConnection()) {
			connection.stringCommands()
				.pSetEx(key.value().getBytes(StandardCharsets.UTF_8), LEASE.toMillis(),
						"P12".getBytes(StandardCharsets.UTF_8));
		}
		inspectable().deleteInProgress(key);
		assertThat(store().claim(key, new Fingerprint("fp"), LEASE)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void aHashRecordOfThePreviousLayoutIsRead() {
		RecordKey key = newKey();
		byte[] raw = key.value().getBytes(StandardCharsets.UTF_8);
		try (RedisConnection connection = connectionFactory.getConnection()) {
			connection.hashCommands().hSet(raw, utf8("s"), utf8("C"));
			connection.hashCommands().hSet(raw, utf8("t"), utf8("0123456789abcdef0123456789abcdef"));
			connection.hashCommands().hSet(raw, utf8("f"), utf8("fp-old"));
			connection.hashCommands().hSet(raw, utf8("r"), new byte[] { 'V', '1' });
			connection.keyCommands().pExpire(raw, TTL.toMillis());
		}
		IdempotencyRecord read = inspectable().inspect(key).orElseThrow();
		assertThat(read.state()).isEqualTo(IdempotencyRecord.State.COMPLETED);
		assertThat(read.fingerprint()).isEqualTo(new Fingerprint("fp-old"));
		assertThat(read.result()).isEqualTo(new StoredResult(new byte[] { 'V', '1' }));
		assertThat(read.claimedAt()).isNull();
		assertThat(read.expiresIn()).isPositive().isLessThanOrEqualTo(TTL);
		assertThat(inspectable().delete(key)).isTrue();
		assertThat(inspectable().inspect(key)).isEmpty();
	}

	@Test
	void anInProgressRecordKeepsItsClaimTimeWhenItsLeaseIsRenewed() {
		Fingerprint fp = new Fingerprint("fp");
		RecordKey key = newKey();
		String token = ((ClaimResult.Acquired) store().claim(key, fp, LEASE)).token();
		byte[] raw = key.value().getBytes(StandardCharsets.UTF_8);
		byte[] claimed;
		try (RedisConnection connection = connectionFactory.getConnection()) {
			claimed = connection.stringCommands().get(raw);
		}
		assertThat(store().renew(key, token, fp, LEASE.multipliedBy(2))).isTrue();
		try (RedisConnection connection = connectionFactory.getConnection()) {
			assertThat(connection.stringCommands().get(raw)).isEqualTo(claimed);
		}
	}

	private static byte[] utf8(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
