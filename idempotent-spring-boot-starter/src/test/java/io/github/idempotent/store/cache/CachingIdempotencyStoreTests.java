package io.github.idempotent.store.cache;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.ResolvableType;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.unit.DataSize;

import io.github.idempotent.core.FailureMode;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.core.IdempotencyKeyReusedException;
import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyPolicy;
import io.github.idempotent.core.JacksonResultCodec;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;
import io.github.idempotent.testsupport.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class CachingIdempotencyStoreTests {

	private static final Fingerprint FP = new Fingerprint("fp");

	private static final Duration LEASE = Duration.ofSeconds(30);

	private final CountingStore store = new CountingStore();

	private final AtomicLong nanos = new AtomicLong();

	private final CachingIdempotencyStore cache = new CachingIdempotencyStore(this.store, DataSize.ofKilobytes(64),
			Duration.ofSeconds(10), true, null, this.nanos::get);

	@Test
	void replayOfAResultCompletedHereIsServedWithoutTheStore() {
		RecordKey key = new RecordKey("k");
		String token = ((ClaimResult.Acquired) this.cache.claim(key, FP, LEASE)).token();
		StoredResult result = new StoredResult(new byte[] { 'V', '1' });
		assertThat(this.cache.complete(key, token, FP, result, Duration.ofHours(1))).isTrue();
		int claims = this.store.claims.get();
		for (int i = 0; i < 5; i++) {
			assertThat(this.cache.claim(key, FP, LEASE)).isEqualTo(new ClaimResult.Completed(FP, result));
		}
		assertThat(this.store.claims).hasValue(claims);
	}

	@Test
	void replayOfAResultCompletedElsewhereIsReadOnceThenServedLocally() {
		RecordKey key = new RecordKey("elsewhere");
		StoredResult result = completeInStore(key, Duration.ofHours(1));
		for (int i = 0; i < 5; i++) {
			assertThat(this.cache.claim(key, FP, LEASE)).isEqualTo(new ClaimResult.Completed(FP, result));
		}
		assertThat(this.store.claims).hasValue(2);
	}

	@Test
	void withoutWriteThroughAResultIsCachedOnlyOnceReadBackFromTheStore() {
		CachingIdempotencyStore readThrough = new CachingIdempotencyStore(this.store, DataSize.ofKilobytes(64),
				Duration.ofSeconds(10), false, null, this.nanos::get);
		RecordKey key = new RecordKey("in-a-transaction");
		String token = ((ClaimResult.Acquired) readThrough.claim(key, FP, LEASE)).token();
		readThrough.complete(key, token, FP, new StoredResult(new byte[] { 'V' }), Duration.ofHours(1));
		assertThat(readThrough.cachedResults()).isZero();
		readThrough.claim(key, FP, LEASE);
		readThrough.claim(key, FP, LEASE);
		assertThat(this.store.claims).as("one read from the store, then the cache").hasValue(2);
	}

	@Test
	void aKeyInProgressIsNeverCached() {
		RecordKey key = new RecordKey("running");
		assertThat(this.cache.claim(key, FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
		for (int i = 0; i < 3; i++) {
			assertThat(this.cache.claim(key, FP, LEASE)).isInstanceOf(ClaimResult.InProgress.class);
		}
		assertThat(this.store.claims).hasValue(4);
		assertThat(this.cache.cachedResults()).isZero();
	}

	@Test
	void aReleasedKeyIsNotCachedAndCanBeClaimedAgain() {
		RecordKey key = new RecordKey("released");
		String token = ((ClaimResult.Acquired) this.cache.claim(key, FP, LEASE)).token();
		assertThat(this.cache.release(key, token)).isTrue();
		assertThat(this.cache.claim(key, FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(this.cache.cachedResults()).isZero();
	}

	@Test
	void anEntryLivesNoLongerThanItsRecord() {
		RecordKey key = new RecordKey("short-ttl");
		String token = ((ClaimResult.Acquired) this.cache.claim(key, FP, LEASE)).token();
		this.cache.complete(key, token, FP, new StoredResult(new byte[] { 'V' }), Duration.ofSeconds(2));
		this.nanos.addAndGet(Duration.ofMillis(1900).toNanos());
		assertThat(this.cache.claim(key, FP, LEASE)).isInstanceOf(ClaimResult.Completed.class);
		int claims = this.store.claims.get();
		this.nanos.addAndGet(Duration.ofMillis(200).toNanos());
		this.cache.claim(key, FP, LEASE);
		assertThat(this.store.claims).as("expired entry goes to the store").hasValue(claims + 1);
	}

	@Test
	void anEntryLivesNoLongerThanTheCacheTtl() {
		RecordKey key = new RecordKey("long-ttl");
		completeInStore(key, Duration.ofHours(1));
		this.cache.claim(key, FP, LEASE);
		this.nanos.addAndGet(Duration.ofSeconds(9).toNanos());
		this.cache.claim(key, FP, LEASE);
		assertThat(this.store.claims).hasValue(2);
		this.nanos.addAndGet(Duration.ofSeconds(2).toNanos());
		this.cache.claim(key, FP, LEASE);
		assertThat(this.store.claims).hasValue(3);
	}

	@Test
	void resultsAreKeptUpToTheByteBudgetNotUpToACount() {
		CachingIdempotencyStore small = new CachingIdempotencyStore(this.store, DataSize.ofKilobytes(16),
				Duration.ofSeconds(10), true, null, this.nanos::get);
		for (int i = 0; i < 100; i++) {
			RecordKey key = new RecordKey("budget:" + i);
			String token = ((ClaimResult.Acquired) small.claim(key, FP, LEASE)).token();
			small.complete(key, token, FP, new StoredResult(new byte[512]), Duration.ofHours(1));
		}
		assertThat(small.cachedBytes()).isPositive().isLessThanOrEqualTo(16 * 1024);
		assertThat(small.cachedResults()).isBetween(1L, 31L);
	}

	@Test
	void aResultLargerThanTheWholeCacheIsNotKept() {
		CachingIdempotencyStore small = new CachingIdempotencyStore(this.store, DataSize.ofKilobytes(16),
				Duration.ofSeconds(10), true, null, this.nanos::get);
		RecordKey key = new RecordKey("too-large");
		String token = ((ClaimResult.Acquired) small.claim(key, FP, LEASE)).token();
		StoredResult large = new StoredResult(new byte[32 * 1024]);
		assertThat(small.complete(key, token, FP, large, Duration.ofHours(1))).isTrue();
		assertThat(small.cachedBytes()).isZero();
		int claims = this.store.claims.get();
		assertThat(small.claim(key, FP, LEASE)).isEqualTo(new ClaimResult.Completed(FP, large));
		assertThat(this.store.claims).as("answered by the store").hasValue(claims + 1);
	}

	@Test
	void withoutWriteThroughAResultReadInsideATransactionIsNotCached() {
		// A store that joins transactions may answer inside one with a result that is not
		// committed yet; only a read outside a transaction is known to be committed.
		CachingIdempotencyStore readThrough = new CachingIdempotencyStore(this.store, DataSize.ofKilobytes(64),
				Duration.ofSeconds(10), false, null, this.nanos::get);
		RecordKey key = new RecordKey("read-in-a-transaction");
		StoredResult result = completeInStore(key, Duration.ofHours(1));
		try (HikariDataSource h2 = TestDatabases.h2()) {
			TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(h2));
			ClaimResult inTransaction = transactions.execute((status) -> readThrough.claim(key, FP, LEASE));
			assertThat(inTransaction).isEqualTo(new ClaimResult.Completed(FP, result));
		}
		assertThat(readThrough.cachedResults()).isZero();
		readThrough.claim(key, FP, LEASE);
		assertThat(readThrough.cachedResults()).isOne();
	}

	@Test
	void aDifferentPayloadUnderACachedKeyIsStillRefused() throws Throwable {
		IdempotencyExecutor executor = new IdempotencyExecutor(this.cache, FailureMode.CLOSED, 1 << 20,
				IdempotencyObserver.NONE);
		IdempotencyPolicy policy = new IdempotencyPolicy("op", Duration.ofHours(1), LEASE, Duration.ZERO,
				Duration.ofSeconds(1), List.of(),
				new JacksonResultCodec(new JsonMapper()).bind(ResolvableType.forClass(String.class)));
		RecordKey key = new RecordKey("reused");
		try (executor) {
			assertThat(executor.execute(policy, "reused", key, FP, () -> "first", null)).isEqualTo("first");
			assertThat(executor.execute(policy, "reused", key, FP, () -> "second", null)).isEqualTo("first");
			int claims = this.store.claims.get();
			assertThatExceptionOfType(IdempotencyKeyReusedException.class).isThrownBy(
					() -> executor.execute(policy, "reused", key, new Fingerprint("other"), () -> "third", null));
			assertThat(this.store.claims).as("refused from the cache").hasValue(claims);
		}
	}

	private StoredResult completeInStore(RecordKey key, Duration ttl) {
		String token = ((ClaimResult.Acquired) this.store.claim(key, FP, LEASE)).token();
		StoredResult result = new StoredResult(new byte[] { 'V', '2' });
		this.store.complete(key, token, FP, result, ttl);
		return result;
	}

	static final class CountingStore extends InMemoryIdempotencyStore {

		final AtomicInteger claims = new AtomicInteger();

		@Override
		public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
			this.claims.incrementAndGet();
			return super.claim(key, fingerprint, lease);
		}

	}

}
