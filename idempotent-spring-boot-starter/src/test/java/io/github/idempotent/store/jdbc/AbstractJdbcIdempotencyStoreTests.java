package io.github.idempotent.store.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.transaction.support.TransactionTemplate;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.AbstractInspectableIdempotencyStoreContractTest;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.OwnerToken;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.testsupport.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * The store contract plus what only the JDBC store does (take-over of expired rows,
 * purge, completion inside the caller's transaction), against one database. Each subclass
 * creates a table of its own from the shipped schema script and drops it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractJdbcIdempotencyStoreTests extends AbstractInspectableIdempotencyStoreContractTest {

	private static final Fingerprint FP = new Fingerprint("fp-1");

	// A lease that ran out longer ago than the default take-over memory.
	private static final long PAST_THE_MEMORY = JdbcIdempotencyStore.DEFAULT_TAKEOVER_MEMORY.toSeconds() + 10;

	private HikariDataSource dataSource;

	private String tableName;

	private JdbcTemplate jdbc;

	protected abstract HikariDataSource createDataSource();

	protected abstract JdbcDialect expectedDialect();

	@BeforeAll
	void createTable() {
		this.dataSource = createDataSource();
		this.tableName = TestDatabases.uniqueTableName("idem_" + expectedDialect().getPlatform());
		this.jdbc = new JdbcTemplate(this.dataSource);
		new ResourceDatabasePopulator(new ByteArrayResource(expectedDialect().schema(this.tableName).getBytes()))
			.execute(this.dataSource);
	}

	@AfterAll
	void dropTable() {
		try {
			if (this.jdbc != null) {
				this.jdbc.execute("DROP TABLE " + this.tableName);
			}
		}
		finally {
			if (this.dataSource != null) {
				this.dataSource.close();
			}
		}
	}

	@Override
	protected IdempotencyStore createStore() {
		return new JdbcIdempotencyStore(this.dataSource, this.tableName);
	}

	/**
	 * Whether a claim's INSERT waits for a transaction that has updated the row and is
	 * still open, rather than answering from the row as last committed.
	 */
	protected boolean duplicateWaitsForAnOpenTransaction() {
		return expectedDialect() == JdbcDialect.POSTGRESQL;
	}

	private JdbcIdempotencyStore jdbcStore() {
		return (JdbcIdempotencyStore) store();
	}

	@Test
	void aRowClaimedByAnEarlierVersionIsReadAndListedWithItsAgeUnknown() {
		String prefix = newPrefix();
		RecordKey key = new RecordKey(prefix + ":_:op:old");
		store().claim(key, FP, LEASE);
		// The tokens of earlier versions: 32 hex digits, no claim time.
		this.jdbc.update("UPDATE " + this.tableName + " SET owner_token = ? WHERE idempotency_key = ?",
				"0123456789abcdef0123456789abcdef", key.value());
		IdempotencyRecord read = inspectable().inspect(key).orElseThrow();
		assertThat(read.state()).isEqualTo(IdempotencyRecord.State.IN_PROGRESS);
		assertThat(read.claimedAt()).isNull();
		assertThat(listAll(prefix, Duration.ofHours(1), 10)).extracting(IdempotencyRecord::key).containsExactly(key);
	}

	@Test
	void aRowWhoseFingerprintIsBlankIsDamagedNotAFailedClaim() {
		RecordKey key = new RecordKey(newPrefix() + ":_:op:blank");
		store().claim(key, FP, LEASE);
		// A row written by hand or by a broken migration: a blank fingerprint is none.
		this.jdbc.update("UPDATE " + this.tableName + " SET fingerprint = ' ' WHERE idempotency_key = ?", key.value());
		assertThat(store().claim(key, FP, LEASE)).isInstanceOf(ClaimResult.Damaged.class);
		assertThat(inspectable().inspect(key)).get()
			.extracting(IdempotencyRecord::state)
			.isEqualTo(IdempotencyRecord.State.UNREADABLE);
	}

	@Test
	void detectsTheDialectFromTheDatabase() {
		assertThat(jdbcStore().getDialect()).isEqualTo(expectedDialect());
		assertThat(jdbcStore().maxKeyLength()).isEqualTo(512);
	}

	@Test
	void aKeyOfTheLongestLengthIsStored() {
		RecordKey key = new RecordKey("k".repeat(496) + "é" + newKey().value().substring(0, 15));
		assertThat(key.value()).hasSize(512);
		assertThat(store().claim(key, FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(store().claim(key, FP, LEASE)).isInstanceOf(ClaimResult.InProgress.class);
	}

	@Test
	void keysThatDifferOnlyInCaseOrTrailingSpacesAreDifferentRecords() {
		String base = newKey().value();
		assertThat(store().claim(new RecordKey(base + "a"), FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(store().claim(new RecordKey(base + "A"), FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(store().claim(new RecordKey(base + "a "), FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void anExpiredResultIsTakenOverByUpdateWithANewFingerprint() {
		RecordKey key = newKey();
		String token = ((ClaimResult.Acquired) store().claim(key, FP, LEASE)).token();
		store().complete(key, token, FP, new StoredResult(new byte[] { 1 }), Duration.ofMillis(1));
		expire(key);
		ClaimResult again = store().claim(key, new Fingerprint("fp-2"), LEASE);
		assertThat(again).isInstanceOfSatisfying(ClaimResult.Acquired.class, (acquired) -> {
			// The call before finished: this is no take-over.
			assertThat(acquired.attempt()).isOne();
			assertThat(acquired.previousAttemptStartedAt()).isNull();
		});
		assertThat(store().claim(key, FP, LEASE)).isInstanceOfSatisfying(ClaimResult.InProgress.class,
				(inProgress) -> assertThat(inProgress.fingerprint()).isEqualTo(new Fingerprint("fp-2")));
		assertThat(this.jdbc.queryForObject("SELECT COUNT(*) FROM " + this.tableName + " WHERE owner_token = ?",
				Integer.class, ((ClaimResult.Acquired) again).token()))
			.isOne();
	}

	@Test
	void aStormOfClaimsOnAnExpiredRowHasExactlyOneWinner() throws Exception {
		int threads = 64;
		for (int round = 0; round < 3; round++) {
			RecordKey key = newKey();
			String token = ((ClaimResult.Acquired) store().claim(key, FP, LEASE)).token();
			store().complete(key, token, FP, new StoredResult(new byte[] { 1 }), TTL);
			expire(key);
			ExecutorService pool = Executors.newFixedThreadPool(threads);
			try {
				CountDownLatch start = new CountDownLatch(1);
				List<Future<ClaimResult>> claims = new ArrayList<>();
				for (int i = 0; i < threads; i++) {
					claims.add(pool.submit(() -> {
						start.await();
						return store().claim(key, FP, LEASE);
					}));
				}
				start.countDown();
				int acquired = 0;
				for (Future<ClaimResult> claim : claims) {
					ClaimResult result = claim.get(30, TimeUnit.SECONDS);
					if (result instanceof ClaimResult.Acquired) {
						acquired++;
					}
					else {
						assertThat(result).isInstanceOf(ClaimResult.InProgress.class);
					}
				}
				assertThat(acquired).as("take-overs that won, round %d", round).isOne();
			}
			finally {
				pool.shutdownNow();
			}
		}
	}

	/**
	 * Two claimers read the same expired row; the second one's take-over is written after
	 * the first took the row over and its call failed, leaving the tombstone of a
	 * take-over. The take-over UPDATE is conditional on the token the claimer read, so
	 * the second one does not write over the row it did not see: it reads the row again
	 * and takes over the tombstone as the attempt after it, not as a second attempt 2.
	 */
	@Test
	void aTakeOverWrittenAfterAnotherClaimerTookTheRowIsTheAttemptAfterThatOne() {
		RecordKey key = newKey();
		store().claim(key, FP, LEASE);
		expire(key);
		StatementLog interleaved = new StatementLog(this.dataSource);
		AtomicReference<ClaimResult.Acquired> first = new AtomicReference<>();
		interleaved.beforeFirst((sql) -> sql.contains("SET state = 'P', owner_token"), () -> {
			ClaimResult.Acquired taken = (ClaimResult.Acquired) store().claim(key, FP, LEASE);
			assertThat(store().release(key, taken.token())).isTrue();
			first.set(taken);
		});
		ClaimResult.Acquired second = (ClaimResult.Acquired) new JdbcIdempotencyStore(interleaved, this.tableName)
			.claim(key, FP, LEASE);
		assertThat(first.get()).as("the claimer that took the row over first").isNotNull();
		assertThat(first.get().attempt()).isEqualTo(2);
		assertThat(second.attempt()).isEqualTo(3);
		assertThat(second.previousAttemptStartedAt()).isEqualTo(OwnerToken.claimedAt(first.get().token()));
	}

	@Test
	void purgeDeletesExpiredRowsInBatchesAndKeepsLiveOnes() {
		this.jdbc.update("DELETE FROM " + this.tableName);
		RecordKey live = newKey();
		store().claim(live, FP, LEASE);
		for (int i = 0; i < 7; i++) {
			RecordKey key = newKey();
			store().claim(key, FP, LEASE);
			expirePastTheTakeoverMemory(key);
		}
		assertThat(jdbcStore().purgeExpired(3)).isEqualTo(7);
		assertThat(this.jdbc.queryForObject("SELECT COUNT(*) FROM " + this.tableName, Integer.class)).isOne();
		assertThat(store().claim(live, FP, LEASE)).isInstanceOf(ClaimResult.InProgress.class);
	}

	@Test
	void concurrentPurgesDeleteEveryExpiredRowOnce() throws Exception {
		this.jdbc.update("DELETE FROM " + this.tableName);
		int rows = 400;
		for (int i = 0; i < rows; i++) {
			store().claim(newKey(), FP, LEASE);
		}
		this.jdbc.update("UPDATE " + this.tableName + " SET expires_at = " + expiredTimestamp(PAST_THE_MEMORY));
		ExecutorService pool = Executors.newFixedThreadPool(4);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<Integer>> purges = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				purges.add(pool.submit(() -> {
					start.await();
					return jdbcStore().purgeExpired(20);
				}));
			}
			start.countDown();
			int deleted = 0;
			for (Future<Integer> purge : purges) {
				deleted += purge.get(30, TimeUnit.SECONDS);
			}
			assertThat(deleted).isEqualTo(rows);
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(this.jdbc.queryForObject("SELECT COUNT(*) FROM " + this.tableName, Integer.class)).isZero();
	}

	@Test
	void purgesRacingTakeOversOfExpiredRowsFailNoClaimAndNoPurge() throws Exception {
		// MySQL/MariaDB: the purge's DELETE locks the expires_at index before the primary
		// key, a take-over's UPDATE the primary key before the index; in opposite orders
		// two statements can deadlock, and InnoDB then fails one of them.
		this.jdbc.update("DELETE FROM " + this.tableName);
		int rows = 300;
		List<RecordKey> keys = new ArrayList<>();
		for (int i = 0; i < rows; i++) {
			RecordKey key = newKey();
			store().claim(key, FP, LEASE);
			keys.add(key);
		}
		List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
		for (int round = 0; round < 12; round++) {
			this.jdbc.update("UPDATE " + this.tableName + " SET expires_at = " + expiredTimestamp(PAST_THE_MEMORY));
			ExecutorService pool = Executors.newFixedThreadPool(8);
			try {
				CountDownLatch start = new CountDownLatch(1);
				List<Future<?>> work = new ArrayList<>();
				for (int purger = 0; purger < 3; purger++) {
					work.add(pool.submit(() -> {
						start.await();
						for (int i = 0; i < 20; i++) {
							jdbcStore().purgeExpired(7);
						}
						return null;
					}));
				}
				for (int claimer = 0; claimer < 5; claimer++) {
					int first = claimer;
					work.add(pool.submit(() -> {
						start.await();
						for (int i = first; i < rows; i += 5) {
							ClaimResult claim = store().claim(keys.get(i), FP, LEASE);
							assertThat(claim).isInstanceOfAny(ClaimResult.Acquired.class, ClaimResult.InProgress.class);
						}
						return null;
					}));
				}
				start.countDown();
				for (Future<?> future : work) {
					try {
						future.get(60, TimeUnit.SECONDS);
					}
					catch (ExecutionException ex) {
						failures.add(ex.getCause());
					}
				}
			}
			finally {
				pool.shutdownNow();
			}
		}
		assertThat(failures).isEmpty();
	}

	@Test
	void aRowAtTheEdgeOfItsExpiryGetsACleanAnswer() {
		// A row with less than a millisecond left reads as 0 ms left, yet is not expired
		// for the take-over's "expires_at <= now": the claim must still answer, in or
		// out of a transaction (where H2's clock stands still).
		for (int i = 0; i < 200; i++) {
			RecordKey key = newKey();
			store().claim(key, FP, LEASE);
			this.jdbc.update("UPDATE " + this.tableName + " SET expires_at = " + timestampIn(i * 10)
					+ " WHERE idempotency_key = ?", key.value());
			ClaimResult claim = (i % 2 == 0) ? store().claim(key, FP, LEASE)
					: transactions().execute((status) -> store().claim(key, FP, LEASE));
			if (claim instanceof ClaimResult.InProgress inProgress) {
				assertThat(inProgress.leaseRemaining()).isPositive();
			}
			else {
				assertThat(claim).isInstanceOf(ClaimResult.Acquired.class);
			}
		}
	}

	@Test
	void thePurgerPurgesOnItsSchedule() {
		RecordKey key = newKey();
		store().claim(key, FP, LEASE);
		expirePastTheTakeoverMemory(key);
		JdbcIdempotencyPurger purger = new JdbcIdempotencyPurger(jdbcStore(), Duration.ofMillis(50), 100);
		purger.start();
		try {
			await().atMost(Duration.ofSeconds(5))
				.until(() -> this.jdbc.queryForObject(
						"SELECT COUNT(*) FROM " + this.tableName + " WHERE idempotency_key = ?", Integer.class,
						key.value()) == 0);
		}
		finally {
			purger.stop();
		}
		assertThat(purger.isRunning()).isFalse();
	}

	@Test
	void claimInsideATransactionCommitsOnItsOwn() {
		RecordKey key = newKey();
		AtomicReference<ClaimResult> seenByOthers = new AtomicReference<>();
		transactions().executeWithoutResult((status) -> {
			store().claim(key, FP, LEASE);
			// Another thread (another connection) must see the claim before the
			// caller's transaction ends.
			Thread other = new Thread(() -> seenByOthers.set(store().claim(key, FP, LEASE)));
			other.start();
			join(other);
			status.setRollbackOnly();
		});
		assertThat(seenByOthers.get()).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(store().claim(key, FP, LEASE)).isInstanceOf(ClaimResult.InProgress.class);
	}

	@Test
	void joinedCompletionCommitsWithTheCallersTransaction() {
		jdbcStore().setJoinTransaction(true);
		RecordKey key = newKey();
		StoredResult result = new StoredResult(new byte[] { 'V', 1 });
		AtomicReference<ClaimResult> seenBeforeCommit = new AtomicReference<>();
		Thread[] duplicate = new Thread[1];
		transactions().executeWithoutResult((status) -> {
			String token = ((ClaimResult.Acquired) store().claim(key, FP, LEASE)).token();
			assertThat(store().complete(key, token, FP, result, TTL)).isTrue();
			duplicate[0] = new Thread(() -> seenBeforeCommit.set(store().claim(key, FP, LEASE)));
			duplicate[0].start();
			if (!duplicateWaitsForAnOpenTransaction()) {
				// H2 answers a duplicate from the committed row at once; so does MySQL or
				// MariaDB, whose claim reads the row before it inserts, without a lock,
				// and finds the committed placeholder: in progress, not waited for.
				join(duplicate[0]);
				assertThat(seenBeforeCommit.get()).isInstanceOf(ClaimResult.InProgress.class);
			}
		});
		join(duplicate[0]);
		if (duplicateWaitsForAnOpenTransaction()) {
			// PostgreSQL, and InnoDB when the claim inserts first, make the duplicate's
			// INSERT wait on the row the transaction updated, until it commits: the
			// duplicate then replays.
			assertThat(seenBeforeCommit.get()).isEqualTo(new ClaimResult.Completed(FP, result));
		}
		assertThat(store().claim(key, FP, LEASE)).isEqualTo(new ClaimResult.Completed(FP, result));
	}

	@Test
	void joinedCompletionRolledBackReleasesTheClaim() {
		jdbcStore().setJoinTransaction(true);
		RecordKey key = newKey();
		transactions().executeWithoutResult((status) -> {
			String token = ((ClaimResult.Acquired) store().claim(key, FP, LEASE)).token();
			assertThat(store().complete(key, token, FP, new StoredResult(new byte[] { 1 }), TTL)).isTrue();
			status.setRollbackOnly();
		});
		assertThat(store().claim(key, FP, LEASE)).isInstanceOf(ClaimResult.Acquired.class);
	}

	@Test
	void withoutJoinTransactionACompletionCommitsEvenIfTheCallerRollsBack() {
		RecordKey key = newKey();
		StoredResult result = new StoredResult(new byte[] { 1 });
		transactions().executeWithoutResult((status) -> {
			String token = ((ClaimResult.Acquired) store().claim(key, FP, LEASE)).token();
			store().complete(key, token, FP, result, TTL);
			status.setRollbackOnly();
		});
		assertThat(store().claim(key, FP, LEASE)).isEqualTo(new ClaimResult.Completed(FP, result));
	}

	@Test
	void thePurgeKeepsTheRowsOfUnfinishedCallsForTheTakeoverMemory() {
		this.jdbc.update("DELETE FROM " + this.tableName);
		RecordKey result = newKey();
		String token = ((ClaimResult.Acquired) store().claim(result, FP, LEASE)).token();
		store().complete(result, token, FP, new StoredResult(new byte[] { 1 }), TTL);
		expire(result);
		RecordKey abandoned = newKey();
		store().claim(abandoned, FP, LEASE);
		expire(abandoned);
		RecordKey deleted = newKey();
		store().claim(deleted, FP, LEASE);
		inspectable().deleteInProgress(deleted);
		expire(deleted);
		assertThat(jdbcStore().purgeExpired(10)).isOne();
		assertThat(this.jdbc.queryForList("SELECT idempotency_key FROM " + this.tableName, String.class))
			.containsExactlyInAnyOrder(abandoned.value(), deleted.value());
		assertThat(((ClaimResult.Acquired) store().claim(abandoned, FP, LEASE)).attempt()).isEqualTo(2);
		assertThat(((ClaimResult.Acquired) store().claim(deleted, FP, LEASE)).attempt()).isEqualTo(2);
		expire(abandoned);
		jdbcStore().setTakeoverMemory(Duration.ofSeconds(5));
		assertThat(jdbcStore().purgeExpired(10)).isOne();
		ClaimResult.Acquired forgotten = (ClaimResult.Acquired) store().claim(abandoned, FP, LEASE);
		assertThat(forgotten.attempt()).isOne();
		assertThat(forgotten.previousAttemptStartedAt()).isNull();
	}

	@Test
	void theTakeOverOfARowClaimedByAnEarlierVersionIsTheSecondAttemptStartedWhoKnowsWhen() {
		RecordKey key = newKey();
		store().claim(key, FP, LEASE);
		this.jdbc.update("UPDATE " + this.tableName + " SET owner_token = ? WHERE idempotency_key = ?",
				"0123456789abcdef0123456789abcdef", key.value());
		expire(key);
		ClaimResult.Acquired second = (ClaimResult.Acquired) store().claim(key, FP, LEASE);
		assertThat(second.attempt()).isEqualTo(2);
		assertThat(second.previousAttemptStartedAt()).isNull();
	}

	@Test
	void aTakeOverIsWrittenInItsTokenAndCompletesInTheCallersTransaction() {
		jdbcStore().setJoinTransaction(true);
		RecordKey key = newKey();
		store().claim(key, FP, LEASE);
		expire(key);
		StoredResult result = new StoredResult(new byte[] { 'V', 2 });
		String[] token = new String[1];
		transactions().executeWithoutResult((status) -> {
			ClaimResult.Acquired second = (ClaimResult.Acquired) store().claim(key, FP, LEASE);
			assertThat(second.attempt()).isEqualTo(2);
			token[0] = second.token();
			assertThat(token[0]).hasSizeLessThanOrEqualTo(64).contains(".2-");
			assertThat(
					this.jdbc.queryForObject("SELECT owner_token FROM " + this.tableName + " WHERE idempotency_key = ?",
							String.class, key.value()))
				.isEqualTo(token[0]);
			assertThat(store().renew(key, token[0], FP, LEASE)).isTrue();
			assertThat(store().complete(key, token[0], FP, result, TTL)).isTrue();
		});
		assertThat(store().claim(key, FP, LEASE)).isEqualTo(new ClaimResult.Completed(FP, result));
		// The same completion sent again after the commit still finds its own token.
		assertThat(store().complete(key, token[0], FP, result, TTL)).isTrue();
		assertThat(store().renew(key, token[0], FP, LEASE)).isTrue();
	}

	@Test
	void rejectsATableNameThatIsNotAnIdentifier() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new JdbcIdempotencyStore(this.dataSource, "t; DROP TABLE x", expectedDialect()));
	}

	private TransactionTemplate transactions() {
		return new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
	}

	private void expire(RecordKey key) {
		expire(key, 10);
	}

	private void expirePastTheTakeoverMemory(RecordKey key) {
		expire(key, PAST_THE_MEMORY);
	}

	private void expire(RecordKey key, long secondsAgo) {
		// Moves the row's deadline into the past by the database's own clock.
		this.jdbc.update("UPDATE " + this.tableName + " SET expires_at = " + expiredTimestamp(secondsAgo)
				+ " WHERE idempotency_key = ?", key.value());
	}

	private String expiredTimestamp(long secondsAgo) {
		return switch (expectedDialect()) {
			case H2 -> "DATEADD(SECOND, -" + secondsAgo + ", CURRENT_TIMESTAMP)";
			case POSTGRESQL -> "statement_timestamp() - " + secondsAgo + " * INTERVAL '1 second'";
			case MYSQL -> "TIMESTAMPADD(SECOND, -" + secondsAgo + ", UTC_TIMESTAMP(6))";
		};
	}

	private String timestampIn(int micros) {
		return switch (expectedDialect()) {
			case H2 -> "DATEADD(MICROSECOND, " + micros + ", CURRENT_TIMESTAMP)";
			case POSTGRESQL -> "statement_timestamp() + " + micros + " * INTERVAL '1 microsecond'";
			case MYSQL -> "TIMESTAMPADD(MICROSECOND, " + micros + ", UTC_TIMESTAMP(6))";
		};
	}

	private static void join(Thread thread) {
		try {
			thread.join(10_000);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		assertThat(thread.isAlive()).as("other claimer finished").isFalse();
	}

}
