package io.github.idempotent.store.redis;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.ResolvableType;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.idempotent.core.FailureMode;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.core.IdempotencyInProgressException;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyPolicy;
import io.github.idempotent.core.IdempotencyStoreUnavailableException;
import io.github.idempotent.core.JacksonResultCodec;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.testsupport.FaultProxy;
import io.github.idempotent.testsupport.TestRedis;
import io.github.idempotent.testsupport.ForwardingIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Lease renewal under network faults between the application and a real Redis, injected
 * by a {@link FaultProxy}. Calls whose key contains {@code :stalled:} reach Redis through
 * the proxy, with a client timeout far longer than their lease (as Lettuce's default 60 s
 * is); the others reach it directly, so a test can stall the renewal path of one key
 * only, as one stuck pooled connection or a pool wait would. Each test ends with the same
 * two checks: the method ran at most once per key, and no key is left in progress.
 */
class RedisLeaseRenewalFaultTests {

	private static final Fingerprint FP = new Fingerprint("fp");

	private final FaultProxy proxy = FaultProxy.start(TestRedis.host(), TestRedis.port());

	private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

	private final List<String> lostLeases = new CopyOnWriteArrayList<>();

	private final ExecutorService callers = Executors.newCachedThreadPool();

	private LettuceConnectionFactory direct;

	private LettuceConnectionFactory proxied;

	private RedisIdempotencyStore directStore;

	private IdempotencyExecutor executor;

	@BeforeEach
	void connect() {
		this.direct = TestRedis.connectionFactory();
		this.directStore = new RedisIdempotencyStore(this.direct);
	}

	@AfterEach
	void close() {
		this.proxy.close();
		this.callers.shutdownNow();
		if (this.executor != null) {
			this.executor.close();
		}
		this.direct.destroy();
		if (this.proxied != null) {
			this.proxied.destroy();
		}
	}

	@Test
	void aStalledRenewalOfOneKeyDoesNotLetTheLeaseOfAnotherLapse() throws Exception {
		useExecutor(Duration.ofSeconds(10));
		IdempotencyPolicy policy = policy(Duration.ofMillis(600));
		String stalled = "idempotent-test:renewal:stalled:" + UUID.randomUUID();
		String healthy = "idempotent-test:renewal:healthy:" + UUID.randomUUID();
		CountDownLatch entered = new CountDownLatch(2);
		CountDownLatch finish = new CountDownLatch(1);
		Future<Object> stalledCall = call(policy, stalled, entered, finish);
		Future<Object> healthyCall = call(policy, healthy, entered, finish);
		assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();

		// The stalled key's next renewal hangs for the client's 10 s timeout; the
		// healthy key's lease must not depend on it. Three leases later, a duplicate of
		// the healthy key still finds it in progress.
		this.proxy.stall();
		Thread.sleep(1800);
		assertThatExceptionOfType(IdempotencyInProgressException.class)
			.isThrownBy(() -> this.executor.execute(policy, healthy, new RecordKey(healthy), FP, () -> {
				this.runs.computeIfAbsent(healthy, (k) -> new AtomicInteger()).incrementAndGet();
				return "duplicate";
			}, null));

		this.proxy.pass();
		finish.countDown();
		assertThat(stalledCall.get(20, TimeUnit.SECONDS)).isEqualTo("ran " + stalled);
		assertThat(healthyCall.get(20, TimeUnit.SECONDS)).isEqualTo("ran " + healthy);
		assertThat(this.lostLeases).isEmpty();
		assertRanOnceAndCompleted(policy, stalled, healthy);
	}

	@Test
	void aFailedRenewalIsRetriedBeforeTheLeaseEnds() throws Exception {
		// Client timeout 3 s, longer than a renewal period (a third of the 6 s lease): a
		// renewal sent at 2 s fails at 5 s, and tried again only a period later, at 7 s,
		// it comes after the lease has ended at 6 s.
		useExecutor(Duration.ofSeconds(3));
		IdempotencyPolicy policy = policy(Duration.ofSeconds(6));
		String key = "idempotent-test:renewal:stalled:" + UUID.randomUUID();
		CountDownLatch entered = new CountDownLatch(1);
		CountDownLatch finish = new CountDownLatch(1);
		Future<Object> call = call(policy, key, entered, finish);
		assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
		long claimed = System.nanoTime();

		// Redis stops answering; 5.4 s into the lease the connection is reset (what the
		// proxy held is lost) and the network recovers. Only a renewal tried again soon
		// after its failure keeps the key: a duplicate trying all through the second
		// after the lease's end never gets it.
		this.proxy.stall();
		sleepUntil(claimed, 5400);
		this.proxy.cut();
		this.proxy.pass();
		sleepUntil(claimed, 5600);
		RecordKey storeKey = new RecordKey(key);
		while (TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - claimed) < 7600) {
			assertThat(this.directStore.claim(storeKey, FP, policy.lease())).as("the key, around its first lease's end")
				.isInstanceOf(ClaimResult.InProgress.class);
			Thread.sleep(50);
		}

		finish.countDown();
		assertThat(call.get(20, TimeUnit.SECONDS)).isEqualTo("ran " + key);
		assertThat(this.lostLeases).isEmpty();
		assertRanOnceAndCompleted(policy, key);
	}

	@Test
	void aFailedCallReleasesItsKeyOnlyOnceItsRenewalsInFlightHaveEnded() throws Exception {
		// Renewals alone go through the proxy; the claim and the release go straight to
		// Redis, so nothing orders the release after a renewal but the watchdog.
		useExecutor(Duration.ofSeconds(10), (proxied, direct) -> new RenewingThrough(proxied, direct));
		IdempotencyPolicy policy = policy(Duration.ofMillis(600));
		String key = "idempotent-test:renewal:released:" + UUID.randomUUID();
		CountDownLatch entered = new CountDownLatch(1);
		CountDownLatch finish = new CountDownLatch(1);
		this.proxy.stall();
		Future<Object> call = this.callers.submit(() -> {
			try {
				return this.executor.execute(policy, key, new RecordKey(key), FP, () -> {
					this.runs.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
					entered.countDown();
					finish.await(30, TimeUnit.SECONDS);
					throw new IllegalStateException("declined");
				}, null);
			}
			catch (Throwable ex) {
				return ex.getMessage();
			}
		});
		assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
		// The first renewal hangs, times out in the watchdog and its retry hangs too;
		// then the method fails while both are still in flight.
		Thread.sleep(800);
		finish.countDown();
		Thread.sleep(300);
		// Renewals that reach Redis after the release would re-create the placeholder.
		this.proxy.pass();
		assertThat(call.get(20, TimeUnit.SECONDS)).isEqualTo("declined");
		Thread.sleep(100);

		assertThat(this.runs.get(key)).hasValue(1);
		assertThat(this.directStore.claim(new RecordKey(key), FP, policy.lease())).as("the released key")
			.isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void aStallPastTheLeaseAsTheMethodReturnsLosesNoResultToADuplicateClaimThatTimedOut() throws Throwable {
		// Found by the chaos campaign. The network stalls as the method returns, for
		// longer than the lease; a duplicate's claim, sent meanwhile, times out, and so
		// does the owner's completion. When the network is back, Redis gets both: the
		// duplicate's claim first, on a key whose lease has run out, so it wins, and the
		// completion finds the key held by another token. Nobody runs under that claim
		// (its caller was answered 503), yet it held the key for a lease, and a retry
		// then ran the method again. Now the claim whose outcome is unknown is released
		// by its token, and the completion is sent again for a lease from its first
		// failure, not from its first attempt, which the client's timeout had used up.
		useExecutor(Duration.ofMillis(1500), (proxied, direct) -> proxied);
		IdempotencyPolicy policy = policy(Duration.ofSeconds(1));
		String key = "idempotent-test:renewal:stalled:" + UUID.randomUUID();
		CountDownLatch duplicateSent = new CountDownLatch(1);
		Object first = this.executor.execute(policy, key, new RecordKey(key), FP, () -> {
			this.runs.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
			this.proxy.stall();
			this.callers.submit(() -> {
				duplicateSent.countDown();
				assertThatExceptionOfType(IdempotencyStoreUnavailableException.class).isThrownBy(
						() -> this.executor.execute(policy, key, new RecordKey(key), FP, () -> "duplicate", null));
				return null;
			});
			assertThat(duplicateSent.await(10, TimeUnit.SECONDS)).isTrue();
			Thread.sleep(200);
			this.callers.submit(() -> {
				Thread.sleep(2000);
				this.proxy.pass();
				return null;
			});
			return "ran " + key;
		}, null);
		assertThat(first).isEqualTo("ran " + key);
		assertThat(this.executor.execute(policy, key, new RecordKey(key), FP, () -> {
			this.runs.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
			return "ran again";
		}, null)).isEqualTo("ran " + key);
		assertRanOnceAndCompleted(policy, key);
	}

	private void useExecutor(Duration proxiedClientTimeout) {
		useExecutor(proxiedClientTimeout, KeyRoutedStore::new);
	}

	private void useExecutor(Duration proxiedClientTimeout,
			BiFunction<IdempotencyStore, IdempotencyStore, IdempotencyStore> stores) {
		this.proxied = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", this.proxy.port()),
				LettuceClientConfiguration.builder().commandTimeout(proxiedClientTimeout).build());
		this.proxied.afterPropertiesSet();
		this.proxied.start();
		IdempotencyStore store = stores.apply(new RedisIdempotencyStore(this.proxied), this.directStore);
		this.executor = new IdempotencyExecutor(store, FailureMode.CLOSED, 1 << 20, new IdempotencyObserver() {

			@Override
			public void leaseLost(IdempotencyPolicy policy, String key) {
				RedisLeaseRenewalFaultTests.this.lostLeases.add(key);
			}

		});
	}

	private Future<Object> call(IdempotencyPolicy policy, String key, CountDownLatch entered, CountDownLatch finish) {
		return this.callers.submit(() -> {
			try {
				return this.executor.execute(policy, key, new RecordKey(key), FP, () -> {
					this.runs.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
					entered.countDown();
					assertThat(finish.await(30, TimeUnit.SECONDS)).isTrue();
					return "ran " + key;
				}, null);
			}
			catch (Throwable ex) {
				throw new IllegalStateException(ex);
			}
		});
	}

	private void assertRanOnceAndCompleted(IdempotencyPolicy policy, String... keys) {
		for (String key : keys) {
			assertThat(this.runs.get(key)).as("runs of %s", key).hasValue(1);
			assertThat(this.directStore.claim(new RecordKey(key), FP, policy.lease())).as("record of %s", key)
				.isInstanceOf(ClaimResult.Completed.class);
		}
	}

	private static void sleepUntil(long start, long millis) throws InterruptedException {
		long remaining = millis - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
		if (remaining > 0) {
			Thread.sleep(remaining);
		}
	}

	private static IdempotencyPolicy policy(Duration lease) {
		return new IdempotencyPolicy("renewal-faults", Duration.ofMinutes(5), lease, Duration.ZERO,
				Duration.ofSeconds(1), List.of(),
				new JacksonResultCodec(new JsonMapper()).bind(ResolvableType.forClass(String.class)));
	}

	/**
	 * Sends the records of keys containing {@code :stalled:} to one store and all others
	 * to another: two real Redis connections, one behind the proxy.
	 */
	private record KeyRoutedStore(IdempotencyStore stalled, IdempotencyStore others) implements IdempotencyStore {

		private IdempotencyStore of(RecordKey key) {
			return key.value().contains(":stalled:") ? this.stalled : this.others;
		}

		@Override
		public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
			return of(key).claim(key, fingerprint, lease);
		}

		@Override
		public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result,
				Duration ttl) {
			return of(key).complete(key, token, fingerprint, result, ttl);
		}

		@Override
		public boolean release(RecordKey key, String token) {
			return of(key).release(key, token);
		}

		@Override
		public boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease) {
			return of(key).renew(key, token, fingerprint, lease);
		}

	}

	/**
	 * Renews through one store and does everything else through another.
	 */
	private static final class RenewingThrough extends ForwardingIdempotencyStore {

		private final IdempotencyStore renewals;

		RenewingThrough(IdempotencyStore renewals, IdempotencyStore others) {
			super(others);
			this.renewals = renewals;
		}

		@Override
		public boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease) {
			return this.renewals.renew(key, token, fingerprint, lease);
		}

	}

}
