package io.github.idempotent.store.jdbc;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
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
 * The statements a claim sends to PostgreSQL, counted as the driver executes them: one
 * for a first claim, one for a replay (which writes nothing), and a second only when the
 * duplicate's transaction committed while the claim waited for it.
 */
@RequiresDatabase(Database.POSTGRESQL)
class PostgreSqlClaimStatementsTests {

	private static final String TABLE = TestDatabases.uniqueTableName("claim_statements");

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static HikariDataSource postgresql;

	private final StatementLog log = new StatementLog(postgresql);

	private final JdbcIdempotencyStore store = new JdbcIdempotencyStore(this.log, TABLE, JdbcDialect.POSTGRESQL);

	@BeforeAll
	static void createTable() {
		postgresql = TestDatabases.postgresql();
		new ResourceDatabasePopulator(
				new ByteArrayResource(JdbcDialect.POSTGRESQL.schema(TABLE).getBytes(StandardCharsets.UTF_8)))
			.execute(postgresql);
	}

	@AfterAll
	static void dropTable() {
		try (HikariDataSource dataSource = postgresql) {
			new JdbcTemplate(dataSource).execute("DROP TABLE IF EXISTS " + TABLE);
		}
	}

	@BeforeEach
	void clearLog() {
		this.log.executed.clear();
	}

	@Test
	void aFirstClaimAndAReplayAreOneStatementEachAndTheReplayWritesNothing() {
		RecordKey key = new RecordKey("statements:" + UUID.randomUUID());
		Fingerprint fingerprint = new Fingerprint("fp");
		ClaimResult first = this.store.claim(key, fingerprint, LEASE);
		assertThat(first).isInstanceOf(ClaimResult.Acquired.class);
		assertThat(this.log.executed).as("first claim").hasSize(1);

		ClaimResult duplicate = this.store.claim(key, fingerprint, LEASE);
		assertThat(duplicate).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(this.log.executed).as("claim of a call in progress").hasSize(2);

		StoredResult result = new StoredResult("receipt".getBytes(StandardCharsets.UTF_8));
		assertThat(this.store.complete(key, ((ClaimResult.Acquired) first).token(), fingerprint, result,
				Duration.ofHours(1)))
			.isTrue();
		Map<String, Object> version = rowVersion(key);
		this.log.executed.clear();

		ClaimResult replay = this.store.claim(key, fingerprint, LEASE);
		assertThat(replay).isEqualTo(new ClaimResult.Completed(fingerprint, result));
		assertThat(this.log.executed).as("replay").hasSize(1);
		assertThat(rowVersion(key)).as("row version after the replay").isEqualTo(version);
	}

	@Test
	void aDuplicateCommittedWhileTheClaimWaitedForItIsReadByASecondStatement() throws Exception {
		RecordKey key = new RecordKey("statements:" + UUID.randomUUID());
		Fingerprint fingerprint = new Fingerprint("fp");
		byte[] result = "receipt".getBytes(StandardCharsets.UTF_8);
		try (Connection other = postgresql.getConnection()) {
			// Another transaction writes the completed row and keeps it open: the claim's
			// INSERT waits for it, and its snapshot predates the commit.
			other.setAutoCommit(false);
			try (PreparedStatement insert = other.prepareStatement(
					"INSERT INTO " + TABLE + " (idempotency_key, state, owner_token, fingerprint, result, expires_at)"
							+ " VALUES (?, 'C', ?, ?, ?, statement_timestamp() + INTERVAL '1 hour')")) {
				insert.setString(1, key.value());
				insert.setString(2, ClaimToken.issue(java.time.Instant.now(), 1));
				insert.setString(3, fingerprint.value());
				insert.setBytes(4, result);
				insert.executeUpdate();
			}
			CompletableFuture<ClaimResult> claim = CompletableFuture
				.supplyAsync(() -> this.store.claim(key, fingerprint, LEASE));
			await().atMost(Duration.ofSeconds(20)).until(() -> claimsWaitingForALock() == 1);
			other.commit();
			assertThat(claim.get(20, TimeUnit.SECONDS))
				.isEqualTo(new ClaimResult.Completed(fingerprint, new StoredResult(result)));
		}
		assertThat(this.log.executed).as("the claim, then the read of the row it waited for").hasSize(2);
	}

	private Map<String, Object> rowVersion(RecordKey key) {
		return new JdbcTemplate(postgresql).queryForMap(
				"SELECT xmin::text AS xmin, ctid::text AS ctid FROM " + TABLE + " WHERE idempotency_key = ?",
				key.value());
	}

	private static int claimsWaitingForALock() {
		return new JdbcTemplate(postgresql).queryForObject(
				"SELECT COUNT(*) FROM pg_stat_activity " + "WHERE wait_event_type = 'Lock' AND query LIKE ?",
				Integer.class, "%INSERT INTO " + TABLE + "%");
	}

}
