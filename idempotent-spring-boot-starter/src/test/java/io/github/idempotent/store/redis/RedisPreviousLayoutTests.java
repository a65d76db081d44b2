package io.github.idempotent.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.core.Fingerprinter;
import io.github.idempotent.core.IdempotencyInProgressException;
import io.github.idempotent.store.InspectableIdempotencyStore.Deletion;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.core.IdempotencyScopeResolver;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Records written by the previous layout (a hash with {@code s}, {@code t}, {@code f},
 * {@code r}) are still there after an upgrade, until their TTL: they replay, and stay
 * fenced against every owner but their own. Written here with raw hash commands, as the
 * previous version's scripts wrote them.
 */
class RedisPreviousLayoutTests {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofMinutes(10);

	private static final String OLD_TOKEN = "0123456789abcdef0123456789abcdef";

	private static LettuceConnectionFactory connectionFactory;

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotentAutoConfiguration.class))
		.withBean(LettuceConnectionFactory.class,
				() -> new LettuceConnectionFactory(
						new RedisStandaloneConfiguration(TestRedis.host(), TestRedis.port())))
		.withBean(Payments.class)
		.withPropertyValues("idempotent.default-scope=global", "idempotent.store.type=redis");

	@BeforeAll
	static void connect() {
		connectionFactory = TestRedis.connectionFactory();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Test
	void aCompletedRecordOfThePreviousLayoutReplaysItsResultAndFingerprint() {
		RedisIdempotencyStore store = new RedisIdempotencyStore(connectionFactory);
		RecordKey key = newKey();
		Fingerprint fingerprint = new Fingerprint("q4kX1c0QwS6R8jVx2mJ0b3n7Zt5yHc9LpA1eD4fG6hI");
		byte[] result = { 'V', '4', '2' };
		writePreviousLayout(key, "C", fingerprint, result, TTL);
		assertThat(store.claim(key, new Fingerprint("other"), LEASE))
			.isEqualTo(new ClaimResult.Completed(fingerprint, new StoredResult(result)));
	}

	@Test
	void aCompletedRecordOfThePreviousLayoutCannotBeCompletedReleasedOrRenewed() {
		RedisIdempotencyStore store = new RedisIdempotencyStore(connectionFactory);
		RecordKey key = newKey();
		Fingerprint fingerprint = new Fingerprint("fp-1");
		writePreviousLayout(key, "C", fingerprint, new byte[] { 1 }, TTL);
		assertThat(store.complete(key, "someone-else", fingerprint, new StoredResult(new byte[] { 2 }), TTL)).isFalse();
		assertThat(store.complete(key, OLD_TOKEN, fingerprint, new StoredResult(new byte[] { 1 }), TTL)).isFalse();
		assertThat(store.release(key, OLD_TOKEN)).isFalse();
		assertThat(store.renew(key, OLD_TOKEN, fingerprint, LEASE)).isFalse();
		assertThat(field(key, "s")).isEqualTo(bytes("C"));
		assertThat(field(key, "t")).isEqualTo(bytes(OLD_TOKEN));
		assertThat(field(key, "r")).isEqualTo(new byte[] { 1 });
		assertThat(store.claim(key, fingerprint, LEASE))
			.isEqualTo(new ClaimResult.Completed(fingerprint, new StoredResult(new byte[] { 1 })));
	}

	@Test
	void asynchronousClaimsReadRecordsOfThePreviousLayoutToo() throws Exception {
		RedisIdempotencyStore store = new RedisIdempotencyStore(connectionFactory);
		Fingerprint fingerprint = new Fingerprint("fp-1");
		RecordKey completed = newKey();
		writePreviousLayout(completed, "C", fingerprint, new byte[] { 'V', '7' }, TTL);
		RecordKey inProgress = newKey();
		writePreviousLayout(inProgress, "P", fingerprint, null, LEASE);
		assertThat(store.claimAsync(completed, fingerprint, LEASE).toCompletableFuture().get(10, TimeUnit.SECONDS))
			.isEqualTo(new ClaimResult.Completed(fingerprint, new StoredResult(new byte[] { 'V', '7' })));
		ClaimResult claim = store.claimAsync(inProgress, fingerprint, LEASE)
			.toCompletableFuture()
			.get(10, TimeUnit.SECONDS);
		assertThat(claim).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(((ClaimResult.InProgress) claim).leaseRemaining()).isPositive().isLessThanOrEqualTo(LEASE);
	}

	@Test
	void aRecordInProgressOfThePreviousLayoutIsInProgressAndFencedAgainstNewOwners() {
		RedisIdempotencyStore store = new RedisIdempotencyStore(connectionFactory);
		RecordKey key = newKey();
		Fingerprint fingerprint = new Fingerprint("fp-1");
		writePreviousLayout(key, "P", fingerprint, null, LEASE);
		ClaimResult claim = store.claim(key, fingerprint, LEASE);
		assertThat(claim).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(((ClaimResult.InProgress) claim).fingerprint()).isEqualTo(fingerprint);
		assertThat(((ClaimResult.InProgress) claim).leaseRemaining()).isPositive().isLessThanOrEqualTo(LEASE);
		assertThat(store.complete(key, "someone-else", fingerprint, new StoredResult(new byte[] { 2 }), TTL)).isFalse();
		assertThat(store.release(key, "someone-else")).isFalse();
		assertThat(store.renew(key, "someone-else", fingerprint, LEASE)).isFalse();
		assertThat(store.claim(key, fingerprint, LEASE)).isInstanceOf(ClaimResult.InProgress.class);
	}

	@Test
	void anOperatorDeletesACompletedRecordOfThePreviousLayoutButNotOneInProgress() {
		RedisIdempotencyStore store = new RedisIdempotencyStore(connectionFactory);
		RecordKey completed = newKey();
		writePreviousLayout(completed, "C", new Fingerprint("fp-1"), new byte[] { 1 }, TTL);
		RecordKey inProgress = newKey();
		writePreviousLayout(inProgress, "P", new Fingerprint("fp-1"), null, LEASE);
		assertThat(store.deleteUnlessHeld(completed)).isEqualTo(Deletion.DELETED);
		assertThat(store.deleteUnlessHeld(inProgress)).isEqualTo(Deletion.HELD);
		assertThat(store.claim(completed, new Fingerprint("fp-1"), LEASE)).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(field(inProgress, "s")).isEqualTo(bytes("P"));
		RecordKey kept = newKey();
		writePreviousLayout(kept, "C", new Fingerprint("fp-1"), new byte[] { 1 }, TTL);
		assertThat(store.deleteInProgress(kept)).isEqualTo(Deletion.COMPLETED);
		assertThat(store.deleteInProgress(inProgress)).isEqualTo(Deletion.DELETED);
		assertThat(store.claim(inProgress, new Fingerprint("fp-1"), LEASE)).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(field(kept, "s")).isEqualTo(bytes("C"));
	}

	@Test
	void aPlaceholderOfThePreviousVersionKeepsItsLeaseMeaning() throws Exception {
		// The version before attempts were counted wrote a placeholder whose expiry is
		// its
		// lease: 30 s left is 30 s of lease, not a lease that ran out an hour ago.
		RedisIdempotencyStore store = new RedisIdempotencyStore(connectionFactory);
		RecordKey key = newKey();
		Fingerprint fingerprint = new Fingerprint("q4kX1c0QwS6R8jVx2mJ0b3n7Zt5yHc9LpA1eD4fG6hI");
		writePreviousPlaceholder(key, fingerprint, LEASE);
		ClaimResult claim = store.claim(key, fingerprint, LEASE);
		assertThat(claim).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(((ClaimResult.InProgress) claim).leaseRemaining()).isGreaterThan(LEASE.minusSeconds(5))
			.isLessThanOrEqualTo(LEASE);
		ClaimResult async = store.claimAsync(key, fingerprint, LEASE).toCompletableFuture().get(10, TimeUnit.SECONDS);
		assertThat(((ClaimResult.InProgress) async).leaseRemaining()).isGreaterThan(LEASE.minusSeconds(5))
			.isLessThanOrEqualTo(LEASE);
		assertThat(claimScript(key, fingerprint).get(0)).isEqualTo(2L);
		IdempotencyRecord read = store.inspect(key).orElseThrow();
		assertThat(read.isLeaseHeld()).isTrue();
		assertThat(read.expiresIn()).isGreaterThan(LEASE.minusSeconds(5));
		assertThat(read.claimedAt()).isNotNull();
		assertThat(store.deleteUnlessHeld(key)).isEqualTo(Deletion.HELD);
		// Its owner runs the previous version: it renews with PEXPIRE of its lease.
		assertThat(store.complete(key, "someone-else", fingerprint, new StoredResult(new byte[] { 1 }), TTL)).isFalse();
	}

	@Test
	void aPlaceholderOfThePreviousVersionIsGoneWithItsLeaseAndTheNextClaimIsAFirstAttempt() {
		RedisIdempotencyStore store = new RedisIdempotencyStore(connectionFactory);
		RecordKey key = newKey();
		Fingerprint fingerprint = new Fingerprint("fp-1");
		writePreviousPlaceholder(key, fingerprint, Duration.ofMillis(200));
		assertThat(store.claim(key, fingerprint, LEASE)).isInstanceOf(ClaimResult.InProgress.class);
		ClaimResult.Acquired[] acquired = new ClaimResult.Acquired[1];
		await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(50)).until(() -> {
			ClaimResult claim = store.claim(key, fingerprint, LEASE);
			acquired[0] = (claim instanceof ClaimResult.Acquired a) ? a : null;
			return acquired[0] != null;
		});
		assertThat(acquired[0].attempt()).isEqualTo(1);
	}

	@Test
	void aForcedDeleteOfAPlaceholderOfThePreviousVersionKeepsItsClaimTimeForTheNextClaim() {
		RedisIdempotencyStore store = new RedisIdempotencyStore(connectionFactory);
		RecordKey key = newKey();
		Fingerprint fingerprint = new Fingerprint("fp-1");
		long claimedAt = writePreviousPlaceholder(key, fingerprint, LEASE);
		assertThat(store.deleteInProgress(key)).isEqualTo(Deletion.DELETED);
		// The previous version's owner compares its token: a tombstone fences it all the
		// same, since its scripts complete, renew and release a 'P' record only.
		assertThat(raw(key)[0]).isEqualTo((byte) 'D');
		assertThat(raw(key)).hasSize(9);
		ClaimResult.Acquired retry = (ClaimResult.Acquired) store.claim(key, fingerprint, LEASE);
		assertThat(retry.attempt()).isEqualTo(2);
		assertThat(retry.previousAttemptStartedAt()).isEqualTo(Instant.ofEpochSecond(claimedAt));
	}

	@Test
	void aTombstoneOfThePreviousVersionIsTakenOverAsASecondAttemptStartedWhoKnowsWhen() {
		RedisIdempotencyStore store = new RedisIdempotencyStore(connectionFactory);
		RecordKey key = newKey();
		byte[] tombstone = new byte[9];
		tombstone[0] = 'D';
		System.arraycopy(RecordLayout.token(RedisIdempotencyStore.newToken()), 0, tombstone, 1, 8);
		try (RedisConnection connection = connectionFactory.getConnection()) {
			connection.stringCommands().pSetEx(bytes(key.value()), LEASE.toMillis(), tombstone);
		}
		assertThat(store.inspect(key)).isEmpty();
		ClaimResult.Acquired retry = (ClaimResult.Acquired) store.claim(key, new Fingerprint("fp-1"), LEASE);
		assertThat(retry.attempt()).isEqualTo(2);
		assertThat(retry.previousAttemptStartedAt()).isNull();
	}

	@Test
	void thePreviousVersionsClaimReadsThisVersionsPlaceholderAsInProgressAndItsTombstoneAsFree() {
		// During a rolling upgrade both versions share the Redis: what the previous
		// version's claim script (as of b597fdc) answers for what this one writes.
		RedisIdempotencyStore store = new RedisIdempotencyStore(connectionFactory);
		RecordKey key = newKey();
		Fingerprint fingerprint = new Fingerprint("q4kX1c0QwS6R8jVx2mJ0b3n7Zt5yHc9LpA1eD4fG6hI");
		store.claim(key, fingerprint, LEASE);
		byte[] previousPlaceholder = RecordLayout.record(RecordLayout.IN_PROGRESS,
				RecordLayout.token(RedisIdempotencyStore.newToken()), fingerprint, new byte[] { 0, 0, 1 });
		List<?> reply = eval(PREVIOUS_CLAIM, key, previousPlaceholder, bytes(Long.toString(LEASE.toMillis())));
		// In progress (a 409), not damaged (a 500); its lease read as the whole expiry.
		assertThat(reply.get(0)).isEqualTo(2L);
		assertThat(RecordLayout.damage((byte[]) reply.get(1))).isNull();
		assertThat((Long) reply.get(2)).isGreaterThan(RecordLayout.REMEMBERED.toMillis());
		assertThat(store.deleteInProgress(key)).isEqualTo(Deletion.DELETED);
		reply = eval(PREVIOUS_CLAIM, key, previousPlaceholder, bytes(Long.toString(LEASE.toMillis())));
		assertThat(reply.get(0)).isEqualTo(1L);
	}

	/**
	 * The claim script of the version before attempts were counted (b597fdc), as it ran
	 * on instances of that version.
	 */
	private static final String PREVIOUS_CLAIM = """
			local v = redis.pcall('GET', KEYS[1])
			if not v then
			  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
			  return {1}
			end
			if type(v) == 'table' then
			  local t = redis.call('TYPE', KEYS[1])['ok']
			  if t ~= 'hash' then
			    return {6, t}
			  end
			  local r = redis.call('HMGET', KEYS[1], 's', 'f', 'r')
			  if r[1] == 'P' then
			    return {4, r[2], redis.call('PTTL', KEYS[1])}
			  end
			  return {5, r[2], r[3]}
			end
			local s = string.byte(v)
			if s == 68 and #v == 9 then
			  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
			  return {1}
			end
			if s == 80 or s == 112 then
			  if string.sub(v, 2, 9) == string.sub(ARGV[1], 2, 9) then
			    return {1}
			  end
			  return {2, v, redis.call('PTTL', KEYS[1])}
			end
			return {3, v}
			""";

	/**
	 * A placeholder as the previous version's claim wrote it: the claim time alone after
	 * the fingerprint, PX the lease.
	 * @return its claim time
	 */
	private static long writePreviousPlaceholder(RecordKey key, Fingerprint fingerprint, Duration lease) {
		long now = Instant.now().getEpochSecond();
		byte[] claimTime = { (byte) (now >>> 16), (byte) (now >>> 8), (byte) now };
		byte[] placeholder = RecordLayout.record(RecordLayout.IN_PROGRESS,
				RecordLayout.token(RedisIdempotencyStore.newToken()), fingerprint, claimTime);
		try (RedisConnection connection = connectionFactory.getConnection()) {
			connection.stringCommands().pSetEx(bytes(key.value()), lease.toMillis(), placeholder);
		}
		return now;
	}

	private static List<?> claimScript(RecordKey key, Fingerprint fingerprint) {
		byte[] placeholder = RecordLayout.inProgress(RecordLayout.token(RedisIdempotencyStore.newToken()), fingerprint,
				Instant.now().getEpochSecond());
		return eval(new String(RedisScripts.CLAIM.text(), StandardCharsets.UTF_8), key, placeholder,
				bytes(Long.toString(LEASE.plus(RecordLayout.REMEMBERED).toMillis())),
				bytes(Long.toString(RecordLayout.REMEMBERED.toMillis())));
	}

	private static List<?> eval(String script, RecordKey key, byte[]... args) {
		byte[][] keyAndArgs = new byte[args.length + 1][];
		keyAndArgs[0] = bytes(key.value());
		System.arraycopy(args, 0, keyAndArgs, 1, args.length);
		try (RedisConnection connection = connectionFactory.getConnection()) {
			return connection.scriptingCommands().eval(bytes(script), ReturnType.MULTI, 1, keyAndArgs);
		}
	}

	private static byte[] raw(RecordKey key) {
		try (RedisConnection connection = connectionFactory.getConnection()) {
			return connection.stringCommands().get(bytes(key.value()));
		}
	}

	@Test
	void theExecutorReplaysACompletedRecordOfThePreviousLayout() {
		this.contextRunner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			IdempotencyStore store = context.getBean(IdempotencyStore.class);
			String clientKey = UUID.randomUUID().toString();
			RecordKey key = RecordKey.of("idempotent", IdempotencyScopeResolver.GLOBAL, "payments.pay", clientKey,
					store.maxKeyLength());
			Fingerprint fingerprint = context.getBean(Fingerprinter.class).fingerprint(10);
			byte[] json = ("{\"key\":\"" + clientKey + "\",\"amount\":10,\"status\":\"PAID\"}")
				.getBytes(StandardCharsets.UTF_8);
			byte[] result = new byte[json.length + 1];
			result[0] = 'V';
			System.arraycopy(json, 0, result, 1, json.length);
			writePreviousLayout(key, "C", fingerprint, result, TTL);

			assertThat(payments.pay(clientKey, 10)).isEqualTo(new Receipt(clientKey, 10, "PAID"));
			assertThat(payments.executions()).isZero();
		});
	}

	@Test
	void theExecutorReportsARecordInProgressOfThePreviousLayoutAsInProgress() {
		this.contextRunner.withPropertyValues("idempotent.wait-for=0s").run((context) -> {
			Payments payments = context.getBean(Payments.class);
			IdempotencyStore store = context.getBean(IdempotencyStore.class);
			String clientKey = UUID.randomUUID().toString();
			RecordKey key = RecordKey.of("idempotent", IdempotencyScopeResolver.GLOBAL, "payments.pay", clientKey,
					store.maxKeyLength());
			writePreviousLayout(key, "P", context.getBean(Fingerprinter.class).fingerprint(10), null, LEASE);

			assertThatExceptionOfType(IdempotencyInProgressException.class)
				.isThrownBy(() -> payments.pay(clientKey, 10));
			assertThat(payments.executions()).isZero();
		});
	}

	private static RecordKey newKey() {
		return new RecordKey("idempotent-test:RedisPreviousLayoutTests:" + UUID.randomUUID());
	}

	/**
	 * A record as the previous version's scripts left it: HSET of its fields, PEXPIRE.
	 */
	private static void writePreviousLayout(RecordKey key, String state, Fingerprint fingerprint, byte[] result,
			Duration expiry) {
		byte[] raw = key.value().getBytes(StandardCharsets.UTF_8);
		try (RedisConnection connection = connectionFactory.getConnection()) {
			connection.hashCommands().hSet(raw, bytes("s"), bytes(state));
			connection.hashCommands().hSet(raw, bytes("t"), bytes(OLD_TOKEN));
			connection.hashCommands().hSet(raw, bytes("f"), bytes(fingerprint.value()));
			if (result != null) {
				connection.hashCommands().hSet(raw, bytes("r"), result);
			}
			connection.keyCommands().pExpire(raw, expiry.toMillis());
		}
	}

	private static byte[] field(RecordKey key, String field) {
		try (RedisConnection connection = connectionFactory.getConnection()) {
			return connection.hashCommands().hGet(key.value().getBytes(StandardCharsets.UTF_8), bytes(field));
		}
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	static class Payments {

		private int executions;

		public int executions() {
			return this.executions;
		}

		@Idempotent(name = "payments.pay", key = "#key", payload = "#amount")
		public Receipt pay(String key, int amount) {
			this.executions++;
			return new Receipt(key, amount, "PAID");
		}

	}

	record Receipt(String key, int amount, String status) {
	}

}
