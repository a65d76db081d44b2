package io.github.idempotent.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.TrackingArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.push.PushListener;
import io.lettuce.core.codec.ByteArrayCodec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.ResolvableType;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.unit.DataSize;

import io.github.idempotent.core.FailureMode;
import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyPolicy;
import io.github.idempotent.core.JacksonResultCodec;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.cache.CachingIdempotencyStore;
import io.github.idempotent.testsupport.FaultProxy;
import io.github.idempotent.testsupport.TestRedis;
import io.github.idempotent.testsupport.ForwardingIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * The local cache kept right by Redis invalidation tracking, against a real Redis:
 * instance A (a {@link CachingIdempotencyStore} whose tracking connection goes through a
 * {@link FaultProxy}, its store connection straight to Redis) and instance B (another
 * connection factory) that changes records behind A's back.
 * <p>
 * "Afterwards" is precise here: once {@link RedisRecordTracking#sync()}, a PING sent on
 * A's tracking connection after B's command returned, is answered, every push Redis sent
 * for B's change has been handled, so A's next replay must go to the store. Without the
 * explicit sync the same holds once the push has crossed the network, and never later
 * than the maximum staleness, which the stall test shows.
 */
class RedisTrackedLocalCacheTests {

	private static final Fingerprint FP = new Fingerprint("fp");

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration MAX_STALENESS = Duration.ofMillis(300);

	private final FaultProxy proxy = FaultProxy.start(TestRedis.host(), TestRedis.port());

	private final String prefix = "idempotent-test:tracked:" + UUID.randomUUID() + ":";

	private LettuceConnectionFactory storeConnections;

	private LettuceConnectionFactory trackingConnections;

	private LettuceConnectionFactory otherInstance;

	private CountingStore storeOfA;

	private RedisRecordTracking tracking;

	private CachingIdempotencyStore instanceA;

	private RedisIdempotencyStore instanceB;

	@BeforeEach
	void start() {
		this.storeConnections = TestRedis.connectionFactory();
		this.otherInstance = TestRedis.connectionFactory();
		this.trackingConnections = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", this.proxy.port()));
		this.trackingConnections.afterPropertiesSet();
		this.trackingConnections.start();
		this.storeOfA = new CountingStore(new RedisIdempotencyStore(this.storeConnections));
		// Reconnecting after a minute only: within the tests' waits, only the maximum
		// staleness can stop a stalled cache.
		this.tracking = new RedisRecordTracking(this.trackingConnections, MAX_STALENESS, Duration.ofMinutes(1));
		this.instanceA = new CachingIdempotencyStore(this.storeOfA, DataSize.ofMegabytes(1), Duration.ofMinutes(1),
				this.tracking);
		this.instanceB = new RedisIdempotencyStore(this.otherInstance);
		await().atMost(Duration.ofSeconds(10)).until(this.instanceA::isServing);
	}

	@AfterEach
	void stop() {
		this.proxy.pass();
		this.instanceA.close();
		this.proxy.close();
		try (RedisConnection connection = this.storeConnections.getConnection()) {
			for (byte[] key : connection.keyCommands().keys(utf8(this.prefix + "*"))) {
				connection.keyCommands().del(key);
			}
		}
		this.storeConnections.destroy();
		this.trackingConnections.destroy();
		this.otherInstance.destroy();
	}

	@Test
	void aReplayIsServedFromTheCacheOnceTrackedWithoutAskingTheStore() {
		RecordKey key = completedAndCachedByA("v1");
		int claims = this.storeOfA.claims.get();
		for (int i = 0; i < 5; i++) {
			assertThat(this.instanceA.claim(key, FP, LEASE)).isEqualTo(completed("v1"));
		}
		assertThat(this.storeOfA.claims).hasValue(claims);
	}

	@Test
	void aContextStoppedAndStartedAgainServesReplaysFromTheCacheAgain() {
		// As a context stops and starts its lifecycle beans (Spring's test context cache
		// pauses a context it does not use): tracking first, then the connection
		// factory, which shuts its Lettuce client down and makes a new one on start.
		this.tracking.stop();
		this.trackingConnections.stop();
		this.trackingConnections.start();
		this.tracking.start();
		await().atMost(Duration.ofSeconds(10)).until(this.instanceA::isServing);
		RecordKey key = completedAndCachedByA("v1");
		int claims = this.storeOfA.claims.get();
		assertThat(this.instanceA.claim(key, FP, LEASE)).isEqualTo(completed("v1"));
		assertThat(this.storeOfA.claims).hasValue(claims);
	}

	@Test
	void aRecordDeletedByAnotherInstanceIsNotReplayedFromTheCacheAfterwards() throws Exception {
		RecordKey key = completedAndCachedByA("v1");
		deleteOnB(key);
		sync();
		assertThat(this.instanceA.claim(key, FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void aRecordReplacedByAnotherInstanceIsReplayedAsTheStoreHasIt() throws Exception {
		RecordKey key = completedAndCachedByA("v1");
		deleteOnB(key);
		String token = ((ClaimResult.Acquired) this.instanceB.claim(key, FP, LEASE)).token();
		assertThat(this.instanceB.complete(key, token, FP, result("v2"), Duration.ofMinutes(5))).isTrue();
		sync();
		assertThat(this.instanceA.claim(key, FP, LEASE)).isEqualTo(completed("v2"));
	}

	@Test
	void anExpiredRecordIsNotReplayedFromTheCache() throws Exception {
		RecordKey key = completedAndCachedByA("v1", Duration.ofMillis(400));
		try (RedisConnection connection = this.otherInstance.getConnection()) {
			await().atMost(Duration.ofSeconds(10)).until(() -> !connection.keyCommands().exists(utf8(key.value())));
		}
		sync();
		assertThat(this.instanceA.claim(key, FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void theMethodRunsAgainOnceAnotherInstanceDeletedItsRecord() throws Throwable {
		IdempotencyExecutor executor = new IdempotencyExecutor(this.instanceA, FailureMode.CLOSED, 1 << 20,
				new IdempotencyObserver() {
				});
		IdempotencyPolicy policy = new IdempotencyPolicy("tracked", Duration.ofMinutes(5), LEASE, Duration.ZERO,
				Duration.ofSeconds(1), List.of(),
				new JacksonResultCodec(new JsonMapper()).bind(ResolvableType.forClass(String.class)));
		String clientKey = this.prefix + "method";
		RecordKey key = new RecordKey(clientKey);
		AtomicInteger runs = new AtomicInteger();
		assertThat(executor.execute(policy, clientKey, key, FP, () -> "run " + runs.incrementAndGet(), null))
			.isEqualTo("run 1");
		assertThat(executor.execute(policy, clientKey, key, FP, () -> "run " + runs.incrementAndGet(), null))
			.isEqualTo("run 1");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.instanceA.cachedResults() == 1);
		assertThat(executor.execute(policy, clientKey, key, FP, () -> "run " + runs.incrementAndGet(), null))
			.isEqualTo("run 1");

		deleteOnB(key);
		sync();
		assertThat(executor.execute(policy, clientKey, key, FP, () -> "run " + runs.incrementAndGet(), null))
			.isEqualTo("run 2");
		assertThat(runs).hasValue(2);
	}

	@Test
	void aCutTrackingConnectionDropsTheCacheSoChangesMadeMeanwhileAreNotMissed() throws Exception {
		RecordKey key = completedAndCachedByA("v1");
		// The connection breaks before B's change: its push is lost with the connection.
		this.proxy.cut();
		deleteOnB(key);
		// Until A notices, the old session may still look current; then the cache is
		// emptied and serves again once a new session is tracked.
		await().atMost(Duration.ofSeconds(10))
			.until(() -> this.instanceA.cachedResults() == 0 && this.instanceA.isServing());
		assertThat(this.instanceA.claim(key, FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void aStalledTrackingConnectionStopsTheCacheWithinTheMaximumStaleness() throws Exception {
		RecordKey key = completedAndCachedByA("v1");
		this.proxy.stall();
		// B's push is held in the stalled connection: A cannot know of the delete.
		deleteOnB(key);
		await().atMost(Duration.ofSeconds(10)).until(() -> !this.instanceA.isServing());
		ClaimResult claim = this.instanceA.claim(key, FP, LEASE);
		assertThat(claim).isInstanceOf(ClaimResult.Acquired.class);
		String token = ((ClaimResult.Acquired) claim).token();
		assertThat(this.instanceA.complete(key, token, FP, result("v2"), Duration.ofMinutes(5))).isTrue();

		this.proxy.pass();
		await().atMost(Duration.ofSeconds(10)).until(this.instanceA::isServing);
		sync();
		assertThat(this.instanceA.claim(key, FP, LEASE)).isEqualTo(completed("v2"));
	}

	@Test
	void aTrackingWithoutAMaximumStalenessIsRefusedWithWhatToGiveIt() {
		RedisIdempotencyStore store = new RedisIdempotencyStore(this.storeConnections);
		assertThatIllegalArgumentException().isThrownBy(() -> store.recordTracking(null))
			.withMessageContaining("maxStaleness")
			.withMessageContaining("at least 10ms");
	}

	@Test
	void withoutTrackingADeletedRecordIsStillReplayedUntilTheCacheTtl() {
		// The opt-in cache of stores without tracking: the trade-off the docs state.
		CachingIdempotencyStore untracked = new CachingIdempotencyStore(
				new RedisIdempotencyStore(this.storeConnections), DataSize.ofMegabytes(1), Duration.ofMinutes(1));
		RecordKey key = new RecordKey(this.prefix + UUID.randomUUID());
		String token = ((ClaimResult.Acquired) untracked.claim(key, FP, LEASE)).token();
		assertThat(untracked.complete(key, token, FP, result("v1"), Duration.ofMinutes(5))).isTrue();
		deleteOnB(key);
		assertThat(untracked.claim(key, FP, LEASE)).isEqualTo(completed("v1"));
	}

	@Test
	void keysReadByAScriptOnATrackingConnectionAreTrackedToo() {
		// Not relied on (the cache reads with GET), but measured: Redis 7 tracks the keys
		// that commands inside EVALSHA read, for the client that sent the script.
		RedisClient client = (RedisClient) this.storeConnections.getRequiredNativeClient();
		byte[] key = utf8(this.prefix + "script");
		AtomicInteger invalidations = new AtomicInteger();
		try (StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE);
				RedisConnection other = this.otherInstance.getConnection()) {
			connection.addListener((PushListener) (message) -> invalidations.incrementAndGet());
			connection.sync().clientTracking(TrackingArgs.Builder.enabled());
			other.stringCommands().set(key, utf8("v"));
			connection.sync()
				.eval("return redis.call('GET', KEYS[1])".getBytes(StandardCharsets.UTF_8), ScriptOutputType.VALUE,
						new byte[][] { key });
			other.keyCommands().del(key);
			connection.sync().ping();
			assertThat(invalidations).hasValue(1);
		}
	}

	private RecordKey completedAndCachedByA(String value) {
		return completedAndCachedByA(value, Duration.ofMinutes(5));
	}

	/**
	 * Completes a record on A, replays it once on A (which caches it through a tracked
	 * read, off the caller's path) and waits until it is cached.
	 */
	private RecordKey completedAndCachedByA(String value, Duration ttl) {
		RecordKey key = new RecordKey(this.prefix + UUID.randomUUID());
		String token = ((ClaimResult.Acquired) this.instanceA.claim(key, FP, LEASE)).token();
		assertThat(this.instanceA.complete(key, token, FP, result(value), ttl)).isTrue();
		assertThat(this.instanceA.claim(key, FP, LEASE)).isEqualTo(completed(value));
		await().atMost(Duration.ofSeconds(10)).until(() -> this.instanceA.cachedResults() == 1);
		return key;
	}

	private void deleteOnB(RecordKey key) {
		try (RedisConnection connection = this.otherInstance.getConnection()) {
			assertThat(connection.keyCommands().del(utf8(key.value()))).isEqualTo(1L);
		}
	}

	private void sync() throws Exception {
		this.tracking.sync().toCompletableFuture().get(10, TimeUnit.SECONDS);
	}

	private static ClaimResult.Completed completed(String value) {
		return new ClaimResult.Completed(FP, result(value));
	}

	private static StoredResult result(String value) {
		return new StoredResult(utf8(value));
	}

	private static byte[] utf8(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * Counts the claims that reach the store.
	 */
	private static final class CountingStore extends ForwardingIdempotencyStore {

		private final AtomicInteger claims = new AtomicInteger();

		CountingStore(IdempotencyStore delegate) {
			super(delegate);
		}

		@Override
		public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
			this.claims.incrementAndGet();
			return super.claim(key, fingerprint, lease);
		}

	}

}
