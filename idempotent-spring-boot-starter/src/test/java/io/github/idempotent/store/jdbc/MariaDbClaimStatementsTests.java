package io.github.idempotent.store.jdbc;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.core.io.ByteArrayResource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;

import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The statements a claim sends to MariaDB, counted as the driver executes them: one
 * {@code SELECT} for a replay and for the claim of a call in progress, which neither
 * write nor wait for a transaction that has locked the row; a {@code SELECT} and an
 * {@code INSERT} for a first claim; and a second read only when the INSERT found a row
 * another transaction had not committed when the first read ran. None of them is an error
 * when it finds a duplicate: MariaDB's driver logs every error at WARN, a duplicate key's
 * with the client's key in it.
 */
@RequiresDatabase(Database.MARIADB)
class MariaDbClaimStatementsTests {

	private static final String TABLE = TestDatabases.uniqueTableName("claim_statements");

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Fingerprint FINGERPRINT = new Fingerprint("fp");

	private static final StoredResult RESULT = new StoredResult("receipt".getBytes(StandardCharsets.UTF_8));

	private static HikariDataSource mariadb;

	private final StatementLog log = new StatementLog(mariadb);

	private final JdbcIdempotencyStore store = new JdbcIdempotencyStore(this.log, TABLE, JdbcDialect.MYSQL);

	@BeforeAll
	static void createTable() {
		mariadb = TestDatabases.mariadb();
		new ResourceDatabasePopulator(
				new ByteArrayResource(JdbcDialect.MYSQL.schema(TABLE).getBytes(StandardCharsets.UTF_8)))
			.execute(mariadb);
	}

	@AfterAll
	static void dropTable() {
		try (HikariDataSource dataSource = mariadb) {
			new JdbcTemplate(dataSource).execute("DROP TABLE IF EXISTS " + TABLE);
		}
	}

	@BeforeEach
	void clearLog() {
		this.log.executed.clear();
		this.log.failed.clear();
	}

	@Test
	void aReplayAndAClaimOfACallInProgressAreOneSelectAndTheReplayWritesNothing() {
		RecordKey key = newKey();
		ClaimResult first = this.store.claim(key, FINGERPRINT, LEASE);
		assertThat(first).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(this.log.executed).as("first claim: the read that finds nothing, the insert")
			.satisfiesExactly((sql) -> assertThat(sql).startsWith("SELECT"),
					(sql) -> assertThat(sql).startsWith("INSERT"));
		this.log.executed.clear();

		assertThat(this.store.claim(key, FINGERPRINT, LEASE)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(this.log.executed).as("claim of a call in progress")
			.singleElement()
			.satisfies((sql) -> assertThat(sql).startsWith("SELECT"));

		complete(key, first);
		Map<String, Object> row = row(key);
		this.log.executed.clear();

		assertThat(this.store.claim(key, FINGERPRINT, LEASE)).isEqualTo(new ClaimResult.Completed(FINGERPRINT, RESULT));
		assertThat(this.log.executed).as("replay")
			.singleElement()
			.satisfies((sql) -> assertThat(sql).startsWith("SELECT"));
		assertThat(row(key)).as("row after the replay").isEqualTo(row);
	}

	@Test
	void insertingFirstAFirstClaimIsTheInsertAloneAndAReplayTheInsertThenASelect() {
		this.store.setClaimReadsFirst(false);
		RecordKey key = newKey();
		ClaimResult first = this.store.claim(key, FINGERPRINT, LEASE);
		assertThat(first).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(this.log.executed).as("first claim: the insert alone")
			.singleElement()
			.satisfies((sql) -> assertThat(sql).startsWith("INSERT"));
		complete(key, first);
		Map<String, Object> row = row(key);
		this.log.executed.clear();

		assertThat(this.store.claim(key, FINGERPRINT, LEASE)).isEqualTo(new ClaimResult.Completed(FINGERPRINT, RESULT));
		assertThat(this.log.executed).as("replay: the insert that finds the row, then the read")
			.satisfiesExactly((sql) -> assertThat(sql).startsWith("INSERT"),
					(sql) -> assertThat(sql).startsWith("SELECT"));
		assertThat(this.log.failed).as("errors, which the driver logs").isEmpty();
		assertThat(row(key)).as("row after the replay").isEqualTo(row);
	}

	@Test
	void aReplayDoesNotWaitForATransactionThatLockedTheRow() throws Exception {
		RecordKey key = newKey();
		complete(key, this.store.claim(key, FINGERPRINT, LEASE));
		try (Connection other = mariadb.getConnection()) {
			other.setAutoCommit(false);
			try (PreparedStatement lock = other
				.prepareStatement("SELECT state FROM " + TABLE + " WHERE idempotency_key = ? FOR UPDATE")) {
				lock.setString(1, key.value());
				lock.executeQuery().close();
			}
			try {
				CompletableFuture<ClaimResult> replay = claimAsync(key);
				assertThat(replay).as("replay, not waiting for the lock").isDone();
				assertThat(replay.get()).isEqualTo(new ClaimResult.Completed(FINGERPRINT, RESULT));
			}
			finally {
				other.rollback();
			}
		}
	}

	@Test
	void aCompletionNotYetCommittedReadsAsInProgressWithoutWaitingForIt() throws Exception {
		RecordKey key = newKey();
		ClaimResult.Acquired first = (ClaimResult.Acquired) this.store.claim(key, FINGERPRINT, LEASE);
		try (Connection other = mariadb.getConnection()) {
			// A completion joined to its caller's transaction, which is still open.
			other.setAutoCommit(false);
			try (PreparedStatement complete = other.prepareStatement(
					"UPDATE " + TABLE + " SET state = 'C', result = ? WHERE idempotency_key = ? AND owner_token = ?")) {
				complete.setBytes(1, RESULT.bytes());
				complete.setString(2, key.value());
				complete.setString(3, first.token());
				assertThat(complete.executeUpdate()).isOne();
			}
			try {
				CompletableFuture<ClaimResult> duplicate = claimAsync(key);
				assertThat(duplicate).as("claim, not waiting for the lock").isDone();
				assertThat(duplicate.get()).isInstanceOf(ClaimResult.InProgress.class);
				other.commit();
			}
			finally {
				other.rollback();
			}
		}
		assertThat(this.store.claim(key, FINGERPRINT, LEASE)).isEqualTo(new ClaimResult.Completed(FINGERPRINT, RESULT));
	}

	@Test
	void aRowInsertedByATransactionStillOpenIsReadOnceItCommits() throws Exception {
		RecordKey key = newKey();
		assertThat(claimWhileAnotherTransactionInserts(key, Connection::commit))
			.isEqualTo(new ClaimResult.Completed(FINGERPRINT, RESULT));
		assertThat(this.log.executed).as("the read, the insert that waited, the read of the row it waited for")
			.satisfiesExactly((sql) -> assertThat(sql).startsWith("SELECT"),
					(sql) -> assertThat(sql).startsWith("INSERT"), (sql) -> assertThat(sql).startsWith("SELECT"));
		// Two first claims at once, as in a storm on the default settings.
		assertThat(this.log.failed).as("errors, which the driver logs").isEmpty();
	}

	@Test
	void aRowInsertedByATransactionThatRollsBackLeavesTheKeyToTheClaim() throws Exception {
		RecordKey key = newKey();
		assertThat(claimWhileAnotherTransactionInserts(key, Connection::rollback))
			.isInstanceOf(ClaimResult.Acquired.class);
		assertThat(this.log.executed).as("the read, the insert that waited")
			.satisfiesExactly((sql) -> assertThat(sql).startsWith("SELECT"),
					(sql) -> assertThat(sql).startsWith("INSERT"));
	}

	/**
	 * Claims {@code key} while another transaction has inserted its row, completed, and
	 * not committed: the claim's read misses the row, its INSERT waits for that
	 * transaction, which then {@code ends}.
	 */
	private ClaimResult claimWhileAnotherTransactionInserts(RecordKey key, TransactionEnd ends) throws Exception {
		try (Connection other = mariadb.getConnection()) {
			other.setAutoCommit(false);
			insertCompleted(other, key);
			CompletableFuture<ClaimResult> claim = CompletableFuture
				.supplyAsync(() -> this.store.claim(key, FINGERPRINT, LEASE));
			await().atMost(Duration.ofSeconds(20)).until(() -> claimsWaitingForALock() == 1);
			ends.end(other);
			return claim.get(20, TimeUnit.SECONDS);
		}
	}

	/**
	 * Claims {@code key} on another thread and returns once the claim has answered or
	 * waits for a lock.
	 */
	private CompletableFuture<ClaimResult> claimAsync(RecordKey key) {
		this.log.executed.clear();
		CompletableFuture<ClaimResult> claim = CompletableFuture
			.supplyAsync(() -> this.store.claim(key, FINGERPRINT, LEASE));
		await().atMost(Duration.ofSeconds(20)).until(() -> claim.isDone() || claimsWaitingForALock() > 0);
		return claim;
	}

	private void complete(RecordKey key, ClaimResult claim) {
		assertThat(this.store.complete(key, ((ClaimResult.Acquired) claim).token(), FINGERPRINT, RESULT,
				Duration.ofHours(1)))
			.isTrue();
	}

	private static void insertCompleted(Connection connection, RecordKey key) throws SQLException {
		try (PreparedStatement insert = connection.prepareStatement(
				"INSERT INTO " + TABLE + " (idempotency_key, state, owner_token, fingerprint, result, expires_at)"
						+ " VALUES (?, 'C', ?, ?, ?, TIMESTAMPADD(HOUR, 1, UTC_TIMESTAMP(6)))")) {
			insert.setString(1, key.value());
			insert.setString(2, ClaimToken.issue(Instant.now(), 1));
			insert.setString(3, FINGERPRINT.value());
			insert.setBytes(4, RESULT.bytes());
			insert.executeUpdate();
		}
	}

	private static RecordKey newKey() {
		return new RecordKey("statements:" + UUID.randomUUID());
	}

	private static Map<String, Object> row(RecordKey key) {
		return new JdbcTemplate(mariadb).queryForMap("SELECT state, owner_token, fingerprint, HEX(result) AS result,"
				+ " expires_at FROM " + TABLE + " WHERE idempotency_key = ?", key.value());
	}

	private static int claimsWaitingForALock() {
		return new JdbcTemplate(mariadb).queryForObject(
				"SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT' AND trx_query LIKE ?",
				Integer.class, "%" + TABLE + "%");
	}

	interface TransactionEnd {

		void end(Connection connection) throws SQLException;

	}

}
