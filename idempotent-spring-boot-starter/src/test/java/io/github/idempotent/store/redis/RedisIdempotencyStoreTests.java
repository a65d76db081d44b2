package io.github.idempotent.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.AbstractInspectableIdempotencyStoreContractTest;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.InspectableIdempotencyStore.Deletion;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

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
	void memoryIsReadOnTheStoresOwnThreadWhichCloseEnds() throws InterruptedException {
		Thread caller = Thread.currentThread();
		Set<Thread> readers = ConcurrentHashMap.newKeySet();
		LettuceConnectionFactory watched = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(TestRedis.host(), TestRedis.port())) {

			@Override
			public RedisConnection getConnection() {
				readers.add(Thread.currentThread());
				return super.getConnection();
			}

		};
		watched.afterPropertiesSet();
		watched.start();
		RedisIdempotencyStore store = new RedisIdempotencyStore(watched);
		try {
			// Readings at most once a second: three of them.
			for (int claim = 0; claim < 3; claim++) {
				store.claim(newKey(), new Fingerprint("fp"), LEASE);
				await().until(() -> readers.stream().anyMatch((thread) -> thread != caller));
				Thread.sleep(1100);
			}
			// Never the JVM's common pool, which may not block, nor a thread a reading.
			readers.remove(caller);
			assertThat(readers).singleElement().extracting(Thread::getName).isEqualTo("idempotent-redis-memory");
			store.close();
			await().until(() -> readers.stream().noneMatch(Thread::isAlive));
		}
		finally {
			store.close();
			watched.destroy();
		}
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
	void aRecordWhoseFingerprintIsBlankIsDamagedNotAFailedClaim() {
		// Found writing RecordLayoutPropertyTests: the fingerprint's text is kept as it
		// is,
		// and a blank one is no fingerprint (Fingerprint refuses it), so reading it
		// threw IllegalArgumentException out of the claim, to the caller as it was,
		// instead of the refusal a damaged record gets.
		RecordKey key = newKey();
		byte[] record = new byte[12];
		record[0] = 'c';
		System.arraycopy(RecordLayout.token(RedisIdempotencyStore.newToken()), 0, record, 1, 8);
		record[9] = 1;
		record[10] = ' ';
		record[11] = 'V';
		RecordKey hashKey = newKey();
		byte[] raw = hashKey.value().getBytes(StandardCharsets.UTF_8);
		try (RedisConnection connection = connectionFactory.getConnection()) {
			connection.stringCommands().pSetEx(key.value().getBytes(StandardCharsets.UTF_8), TTL.toMillis(), record);
			connection.hashCommands().hSet(raw, utf8("s"), utf8("C"));
			connection.hashCommands().hSet(raw, utf8("t"), utf8("0123456789abcdef0123456789abcdef"));
			connection.hashCommands().hSet(raw, utf8("f"), utf8("  "));
			connection.hashCommands().hSet(raw, utf8("r"), new byte[] { 'V', '1' });
			connection.keyCommands().pExpire(raw, TTL.toMillis());
		}
		assertThat(store().claim(key, new Fingerprint("fp"), LEASE)).isInstanceOf(ClaimResult.Damaged.class);
		assertThat(inspectable().inspect(key).orElseThrow().state()).isEqualTo(IdempotencyRecord.State.UNREADABLE);
		assertThat(store().claim(hashKey, new Fingerprint("fp"), LEASE)).isInstanceOf(ClaimResult.Damaged.class);
		assertThat(inspectable().inspect(hashKey).orElseThrow().state()).isEqualTo(IdempotencyRecord.State.UNREADABLE);
	}

	@Test
	void aHashUnderTheKeyIsNoRecord() {
		// Pre-release builds kept records as hashes: format 1 reads none, and takes a
		// hash for a value of another type, which may be the trace of a call that ran.
		RecordKey key = newKey();
		byte[] raw = key.value().getBytes(StandardCharsets.UTF_8);
		try (RedisConnection connection = connectionFactory.getConnection()) {
			connection.hashCommands().hSet(raw, utf8("s"), utf8("C"));
			connection.hashCommands().hSet(raw, utf8("f"), utf8("fp-old"));
			connection.hashCommands().hSet(raw, utf8("r"), new byte[] { 'V', '1' });
			connection.keyCommands().pExpire(raw, TTL.toMillis());
		}
		assertThat(store().claim(key, new Fingerprint("fp-old"), LEASE))
			.isEqualTo(new ClaimResult.Damaged("it is a Redis hash, not a string (WRONGTYPE)"));
		assertThat(inspectable().inspect(key).orElseThrow().state()).isEqualTo(IdempotencyRecord.State.UNREADABLE);
		assertThat(inspectable().delete(key)).isTrue();
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

	@Test
	void aPlaceholderIsKeptPastItsLeaseButShownAndDeletedAsNoLongerHeld() throws InterruptedException {
		String prefix = newPrefix();
		RecordKey key = new RecordKey(prefix + ":_:op:dead");
		Fingerprint fp = new Fingerprint("fp");
		store().claim(key, fp, Duration.ofMillis(200));
		try (RedisConnection connection = connectionFactory.getConnection()) {
			Long pttl = connection.keyCommands().pTtl(utf8(key.value()));
			assertThat(pttl).isGreaterThan(RecordLayout.REMEMBERED.toMillis());
		}
		IdempotencyRecord held = inspectable().inspect(key).orElseThrow();
		assertThat(held.expiresIn()).isPositive().isLessThanOrEqualTo(Duration.ofMillis(200));
		assertThat(held.isLeaseHeld()).isTrue();
		assertThat(inspectable().deleteUnlessHeld(key)).isEqualTo(Deletion.HELD);
		Thread.sleep(400);
		// Still there (a takeover must see it), but its lease has run out.
		IdempotencyRecord dead = inspectable().inspect(key).orElseThrow();
		assertThat(dead.state()).isEqualTo(IdempotencyRecord.State.IN_PROGRESS);
		assertThat(dead.expiresIn()).isZero();
		assertThat(dead.isLeaseHeld()).isFalse();
		assertThat(listAll(prefix, Duration.ZERO, 100)).extracting(IdempotencyRecord::key).containsExactly(key);
		// Deleted as a call that never finished: the next claim knows it takes over.
		assertThat(inspectable().deleteUnlessHeld(key)).isEqualTo(Deletion.DELETED);
		assertThat(inspectable().inspect(key)).isEmpty();
		assertThat(inspectable().deleteUnlessHeld(key)).isEqualTo(Deletion.NONE);
		ClaimResult.Acquired next = (ClaimResult.Acquired) store().claim(key, fp, LEASE);
		assertThat(next.attempt()).isEqualTo(2);
		assertThat(next.previousAttemptStartedAt()).isNotNull();
	}

	@Test
	void aDuplicateIsToldTheLeaseLeftNotHowLongThePlaceholderIsKept() throws Exception {
		RecordKey key = newKey();
		Fingerprint fp = new Fingerprint("fp");
		store().claim(key, fp, LEASE);
		ClaimResult.InProgress sync = (ClaimResult.InProgress) store().claim(key, fp, LEASE);
		assertThat(sync.leaseRemaining()).isPositive().isLessThanOrEqualTo(LEASE);
		ClaimResult.InProgress async = (ClaimResult.InProgress) ((RedisIdempotencyStore) store())
			.claimAsync(key, fp, LEASE)
			.toCompletableFuture()
			.get(10, TimeUnit.SECONDS);
		assertThat(async.leaseRemaining()).isPositive().isLessThanOrEqualTo(LEASE);
	}

	@Test
	void anOwnerPastItsLeaseThatNobodyTookOverRenewsWithoutLosingItsAttempt() throws InterruptedException {
		RecordKey key = newKey();
		Fingerprint fp = new Fingerprint("fp");
		store().claim(key, fp, Duration.ofMillis(100));
		Thread.sleep(250);
		ClaimResult.Acquired second = (ClaimResult.Acquired) store().claim(key, fp, Duration.ofMillis(100));
		assertThat(second.attempt()).isEqualTo(2);
		Thread.sleep(250);
		// Past its lease and renewed in time: the key is its again, still attempt 2.
		assertThat(store().renew(key, second.token(), fp, LEASE)).isTrue();
		assertThat(store().claim(key, fp, LEASE)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(inspectable().deleteInProgress(key)).isEqualTo(Deletion.DELETED);
		assertThat(((ClaimResult.Acquired) store().claim(key, fp, LEASE)).attempt()).isEqualTo(3);
	}

	@Test
	void aClaimSentAgainAfterItTookTheKeyOverWinsWithTheSameAttempt() throws InterruptedException {
		// Lettuce sends the claim script again on a new connection when the old one broke
		// before the reply: the first send has taken the key over already.
		RecordKey key = newKey();
		Fingerprint fp = new Fingerprint("q4kX1c0QwS6R8jVx2mJ0b3n7Zt5yHc9LpA1eD4fG6hI");
		store().claim(key, fp, Duration.ofMillis(100));
		long claimedAt;
		try (RedisConnection connection = connectionFactory.getConnection()) {
			claimedAt = RecordLayout.claimedAt(connection.stringCommands().get(utf8(key.value())), Instant.now())
				.getEpochSecond();
		}
		Thread.sleep(250);
		byte[] placeholder = RecordLayout.inProgress(RecordLayout.token(RedisIdempotencyStore.newToken()), fp,
				Instant.now().getEpochSecond());
		List<?> first = claimScript(key, placeholder);
		List<?> again = claimScript(key, placeholder);
		assertThat(first.get(0)).isEqualTo(1L);
		assertThat(first.get(1)).isEqualTo(2L);
		assertThat(RecordLayout.readTime((byte[]) first.get(2), 0, Instant.now()).getEpochSecond())
			.isEqualTo(claimedAt);
		assertThat(again.get(0)).isEqualTo(1L);
		assertThat(again.get(1)).isEqualTo(2L);
		assertThat((byte[]) again.get(2)).isEqualTo((byte[]) first.get(2));
		// The native claim sent again finds the placeholder it is answered as its own.
		byte[] stored;
		try (RedisConnection connection = connectionFactory.getConnection()) {
			stored = connection.stringCommands().get(utf8(key.value()));
		}
		assertThat(RecordLayout.sameOwner(stored, placeholder)).isTrue();
		assertThat(RecordLayout.attempt(stored)).isEqualTo(2);
		assertThat(RecordLayout.previousClaimedAt(stored, Instant.now())).isEqualTo(Instant.ofEpochSecond(claimedAt));
	}

	@Test
	void theAttemptStopsCountingAtItsLastByte() {
		RecordKey key = newKey();
		Fingerprint fp = new Fingerprint("fp");
		long now = Instant.now().getEpochSecond();
		byte[] last = RecordLayout.inProgress(RecordLayout.token(RedisIdempotencyStore.newToken()), fp, now,
				RecordLayout.MAX_ATTEMPT, now);
		try (RedisConnection connection = connectionFactory.getConnection()) {
			// Its lease over: only the time it is kept after it is left.
			connection.stringCommands().pSetEx(utf8(key.value()), RecordLayout.REMEMBERED.toMillis() - 1000, last);
		}
		ClaimResult.Acquired next = (ClaimResult.Acquired) store().claim(key, fp, LEASE);
		assertThat(next.attempt()).isEqualTo(RecordLayout.MAX_ATTEMPT);
	}

	private static List<?> claimScript(RecordKey key, byte[] placeholder) {
		try (RedisConnection connection = connectionFactory.getConnection()) {
			return connection.scriptingCommands()
				.eval(RedisScripts.CLAIM.text(), ReturnType.MULTI, 1, utf8(key.value()), placeholder,
						utf8(Long.toString(LEASE.plus(RecordLayout.REMEMBERED).toMillis())),
						utf8(Long.toString(RecordLayout.REMEMBERED.toMillis())));
		}
	}

	private static byte[] utf8(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
