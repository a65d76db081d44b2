package io.github.idempotent.store.jdbc;

import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DuplicateKeyException;
import org.springframework.dao.PessimisticLockingFailureException;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.support.JdbcUtils;
import org.springframework.jdbc.support.MetaDataAccessException;
import org.springframework.transaction.ConfigurableTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.ResourceTransactionManager;
import org.springframework.util.Assert;
import org.springframework.util.StringUtils;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.InspectableIdempotencyStore;
import io.github.idempotent.store.OwnerToken;
import io.github.idempotent.store.StoredResult;

/**
 * {@link IdempotencyStore} on a relational table (the {@code schema-*.sql} scripts next
 * to this class) whose primary key, the scoped key, decides which concurrent claim wins.
 * An expired row is taken over by an UPDATE conditional on the token read, never by
 * delete-then-insert; complete, release and renew are conditional on the token too.
 * <p>
 * Claims, releases and renewals commit on their own, even inside a transaction on the
 * same {@link DataSource}, so that concurrent duplicates see a claim at once. With
 * {@link #setJoinTransaction(boolean) joinTransaction}, a completion inside such a
 * transaction commits with the business rows and a rollback releases the key.
 */
public class JdbcIdempotencyStore implements InspectableIdempotencyStore {

	private static final Log logger = LogFactory.getLog(JdbcIdempotencyStore.class);

	/** Longest key, matching the key column of the shipped schemas. */
	public static final int MAX_KEY_LENGTH = 512;

	/** Default of {@link #setTakeoverMemory}. */
	public static final Duration DEFAULT_TAKEOVER_MEMORY = Duration.ofHours(24);

	public static final String DEFAULT_TABLE_NAME = "idempotency_record";

	private static final Pattern TABLE_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_$]*(\\.[A-Za-z_][A-Za-z0-9_$]*)?");

	// A failed attempt means another claimer changed the row in between.
	private static final int MAX_CLAIM_ATTEMPTS = 10;

	private static final int MAX_PURGE_ATTEMPTS = 8;

	private static final long PURGE_BACKOFF_MILLIS = 20;

	private static final String BLANK_FINGERPRINT = "the row's fingerprint is blank";

	private final JdbcTable table;

	final JdbcOperations jdbc;

	final OwnTransaction ownTransaction;

	final JdbcDialect dialect;

	final Statements sql;

	private final TransactionBoundCompletions transactionBound;

	private volatile boolean joinTransaction;

	private volatile Duration takeoverMemory = DEFAULT_TAKEOVER_MEMORY;

	private volatile boolean claimReadsFirst;

	/** Creates a store on {@code tableName}, its dialect from the metadata. */
	public JdbcIdempotencyStore(DataSource dataSource, String tableName) {
		this(dataSource, tableName, detectDialect(dataSource));
	}

	public JdbcIdempotencyStore(DataSource dataSource, String tableName, JdbcDialect dialect) {
		this(dataSource, new JdbcTemplate(dataSource), new DataSourceTransactionManager(dataSource), tableName,
				dialect);
	}

	/**
	 * Creates a store that runs its statements through {@code jdbc}, so that the
	 * application's settings apply to the store too.
	 * @param transactionManager a transaction manager of {@code dataSource} itself, for
	 * the store's own READ COMMITTED transactions; the store {@link #listenTo listens to}
	 * the transactions it begins
	 */
	public JdbcIdempotencyStore(DataSource dataSource, JdbcOperations jdbc,
			PlatformTransactionManager transactionManager, String tableName, JdbcDialect dialect) {
		Assert.notNull(dataSource, "dataSource must not be null");
		Assert.notNull(jdbc, "jdbc must not be null");
		Assert.isTrue(
				transactionManager instanceof ResourceTransactionManager resources
						&& resources.getResourceFactory() == dataSource,
				"transactionManager must manage transactions of dataSource itself (a DataSourceTransactionManager): "
						+ "the store's own transactions must be on the connections of its table");
		Assert.notNull(dialect, "dialect must not be null");
		Assert.isTrue(tableName != null && TABLE_NAME.matcher(tableName).matches(),
				() -> "tableName '" + tableName + "' must be a plain SQL identifier, optionally schema-qualified");
		this.table = new JdbcTable(tableName, dialect);
		this.jdbc = this.table.guard(jdbc);
		this.ownTransaction = new OwnTransaction(dataSource, transactionManager, dialect);
		this.dialect = dialect;
		this.sql = new Statements();
		this.transactionBound = new TransactionBoundCompletions(this, dataSource);
		if (transactionManager instanceof ConfigurableTransactionManager configurable) {
			listenTo(configurable);
		}
		this.claimReadsFirst = dialect == JdbcDialect.MYSQL;
	}

	/** The dialect of the database behind {@code dataSource}, from its metadata. */
	public static JdbcDialect detectDialect(DataSource dataSource) {
		Assert.notNull(dataSource, "dataSource must not be null");
		try {
			return JdbcDialect.forProductName(
					JdbcUtils.extractDatabaseMetaData(dataSource, DatabaseMetaData::getDatabaseProductName));
		}
		catch (MetaDataAccessException ex) {
			throw new IllegalStateException("Cannot read the database product name to choose the SQL dialect of the "
					+ "idempotency store; pass a JdbcDialect explicitly", ex);
		}
	}

	/**
	 * Checks that the table exists with every column the store uses.
	 * @throws IllegalStateException naming the table, the database and how to create the
	 * table, when it is missing or lacks a column
	 */
	public void checkTable() {
		this.table.check(this.jdbc);
	}

	/**
	 * Sets whether a completion inside a transaction on this store's {@link DataSource}
	 * is written in that transaction (a rollback releases the key) rather than committed
	 * at once.
	 */
	public void setJoinTransaction(boolean joinTransaction) {
		this.joinTransaction = joinTransaction;
	}

	public boolean isJoinTransaction() {
		return this.joinTransaction;
	}

	/**
	 * Listens to the transactions {@code transactionManager} begins, so that with
	 * {@link #setJoinTransaction(boolean) joinTransaction} a completion inside another
	 * manager's transaction, itself inside one that bound a new connection of this
	 * store's {@link DataSource}, is tied to the latter. Any manager may be passed: the
	 * store only looks at transactions that bind a new connection of its DataSource. Call
	 * it before the manager is used; {@link #close} stops listening.
	 */
	public void listenTo(ConfigurableTransactionManager transactionManager) {
		Assert.notNull(transactionManager, "transactionManager must not be null");
		this.transactionBound.listenTo(transactionManager);
	}

	/**
	 * Sets how long after its lease ran out the row of a call that never finished is kept
	 * from the purge, so that a claim of its key knows it takes that call over.
	 */
	public void setTakeoverMemory(Duration takeoverMemory) {
		Assert.isTrue(takeoverMemory != null && !takeoverMemory.isNegative(), "takeoverMemory must not be negative");
		this.takeoverMemory = takeoverMemory;
	}

	/**
	 * Sets whether a claim reads the row before it inserts the placeholder (not on
	 * PostgreSQL, whose claim is one statement). Reading first, a replay is one
	 * {@code SELECT} that locks nothing and never waits; inserting first, a first claim
	 * is one round trip fewer. Off on H2; on by default on MySQL and MariaDB, where an
	 * INSERT that finds a duplicate waits for the transaction that wrote it.
	 */
	public void setClaimReadsFirst(boolean claimReadsFirst) {
		this.claimReadsFirst = claimReadsFirst;
	}

	public boolean isClaimReadsFirst() {
		return this.claimReadsFirst;
	}

	public JdbcDialect getDialect() {
		return this.dialect;
	}

	public String getTableName() {
		return this.table.tableName;
	}

	@Override
	public int maxKeyLength() {
		return MAX_KEY_LENGTH;
	}

	@Override
	public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
		boolean joinable = isJoinable();
		ClaimResult claim = joinable ? this.transactionBound.claimCompletedOnThisThread(key.value(), lease) : null;
		if (claim != null) {
			return claim;
		}
		try {
			claim = this.ownTransaction.run(() -> doClaim(key.value(), fingerprint.value(), millis(lease)));
		}
		catch (RuntimeException ex) {
			if (!this.ownTransaction.isContention(ex)) {
				throw ex;
			}
			claim = contended(key.value(), fingerprint, lease, ex);
		}
		if (joinable && claim instanceof ClaimResult.Acquired acquired) {
			this.transactionBound.claimed(acquired.token(), lease);
		}
		return claim;
	}

	private ClaimResult doClaim(String key, String fingerprint, long leaseMillis) {
		Instant claimedAt = Instant.now();
		String first = ClaimToken.issue(claimedAt, 1);
		for (int attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt++) {
			Row row;
			if (this.sql.claim != null) {
				List<ClaimRow> claimed = this.jdbc.query(this.sql.claim,
						(rs, rowNum) -> new ClaimRow(rs.getInt(1) == 1,
								(rs.getInt(1) == 1 || rs.getInt(8) == 1) ? null : Row.read(rs, 2)),
						key, first, fingerprint, leaseMillis, key);
				if (!claimed.isEmpty() && claimed.get(0).inserted()) {
					return new ClaimResult.Acquired(first);
				}
				// No row, or one another transaction wrote or locked: a statement of its
				// own sees what it committed meanwhile.
				row = (claimed.isEmpty() || claimed.get(0).row() == null) ? select(key) : claimed.get(0).row();
			}
			else {
				// Read first without a lock, not to wait for an open transaction that
				// wrote the row (a joined completion); the INSERT still meets an
				// uncommitted one.
				row = this.claimReadsFirst ? select(key) : null;
				if (row == null) {
					if (inserted(this.sql.insert, key, first, fingerprint, leaseMillis)) {
						return new ClaimResult.Acquired(first);
					}
					row = select(key);
				}
			}
			if (row == null) {
				continue; // released or purged since the insert: insert again
			}
			ClaimResult held = held(row);
			if (held != null) {
				return held;
			}
			// A row past its lease or a tombstone is a call that never finished; an
			// expired result starts again at attempt 1.
			ClaimResult.Acquired acquired = row.completed() ? new ClaimResult.Acquired(first)
					: new ClaimResult.Acquired(ClaimToken.issue(claimedAt, ClaimToken.next(row.token())),
							ClaimToken.next(row.token()), OwnerToken.claimedAt(row.token()));
			// Conditional on the token read: of all the claimers that saw this row
			// expired, exactly one takes it over.
			if (this.jdbc.update(this.sql.takeOver, acquired.token(), fingerprint, leaseMillis, key,
					row.token()) == 1) {
				return acquired;
			}
		}
		throw new IllegalStateException("Could not claim key '" + key + "' in " + MAX_CLAIM_ATTEMPTS
				+ " attempts: its row changed between every read and write");
	}

	private static @Nullable ClaimResult held(Row row) {
		if (row.expired() || row.tombstone()) {
			return null;
		}
		if (row.fingerprint() == null) {
			// Not a row this store writes: refused as damaged, never re-run.
			return new ClaimResult.Damaged(BLANK_FINGERPRINT);
		}
		return row.completed() ? new ClaimResult.Completed(row.fingerprint(), new StoredResult(row.result()))
				: new ClaimResult.InProgress(row.fingerprint(), Duration.ofMillis(Math.max(1, row.millisLeft())));
	}

	// A claim that met contention answers from the row last committed, read without
	// waiting: its result, or in progress (with this claim's fingerprint if there is no
	// live row). Never an outage: a duplicate must not run while the first may commit.
	private ClaimResult contended(String key, Fingerprint fingerprint, Duration lease, RuntimeException contention) {
		logger.debug(
				"Claim of key '" + key + "' met contention; answering from the row as last committed: " + contention);
		Row row = null;
		try {
			row = this.ownTransaction.run(() -> select(key));
		}
		catch (RuntimeException ex) {
			if (!this.ownTransaction.isContention(ex)) {
				ex.addSuppressed(contention);
				throw ex;
			}
		}
		ClaimResult held = (row != null) ? held(row) : null;
		return (held != null) ? held : new ClaimResult.InProgress(fingerprint, lease);
	}

	/** {@code row} {@code null} when it must be read again. */
	private record ClaimRow(boolean inserted, @Nullable Row row) {
	}

	/** {@code fingerprint} {@code null} when blank, which this store never writes. */
	private record Row(boolean completed, boolean tombstone, String token, @Nullable Fingerprint fingerprint,
			byte[] result, long millisLeft, boolean expired) {

		static Row read(ResultSet rs, int first) throws SQLException {
			String state = rs.getString(first);
			String fingerprint = rs.getString(first + 2);
			byte[] result = rs.getBytes(first + 3);
			return new Row("C".equals(state), "D".equals(state), rs.getString(first + 1),
					StringUtils.hasText(fingerprint) ? new Fingerprint(fingerprint) : null,
					(result != null) ? result : new byte[0], rs.getLong(first + 4), rs.getInt(first + 5) == 1);
		}

	}

	private @Nullable Row select(String key) {
		List<Row> rows = this.jdbc.query(this.sql.select, (rs, rowNum) -> Row.read(rs, 1), key);
		return rows.isEmpty() ? null : rows.get(0);
	}

	// A duplicate key is an error on H2 only, elsewhere a row count of 0.
	private boolean inserted(String insert, Object... args) {
		try {
			return this.jdbc.update(insert, args) == 1;
		}
		catch (DuplicateKeyException ex) {
			return false;
		}
	}

	@Override
	public Optional<IdempotencyRecord> inspect(RecordKey key) {
		Row row = select(key.value());
		return (row == null || row.expired() || row.tombstone()) ? Optional.empty() : Optional.of(record(key, row));
	}

	private static IdempotencyRecord record(RecordKey key, Row row) {
		Duration expiresIn = Duration.ofMillis(Math.max(0, row.millisLeft()));
		if (row.fingerprint() == null) {
			return IdempotencyRecord.unreadable(key, BLANK_FINGERPRINT, expiresIn);
		}
		return row.completed()
				? new IdempotencyRecord(key, IdempotencyRecord.State.COMPLETED, row.fingerprint(), null, expiresIn,
						new StoredResult(row.result()))
				: new IdempotencyRecord(key, IdempotencyRecord.State.IN_PROGRESS, row.fingerprint(),
						OwnerToken.claimedAt(row.token()), expiresIn, null);
	}

	/** Keyset pages on the in-progress index; the age, in the token, filtered here. */
	@Override
	public InProgressPage findInProgress(String keyPrefix, Duration olderThan, @Nullable String cursor, int limit) {
		Assert.isTrue(limit > 0, "limit must be positive");
		String prefix = keyPrefix + ":";
		Instant now = Instant.now();
		List<String> examined = new ArrayList<>();
		List<IdempotencyRecord> records = new ArrayList<>();
		this.jdbc.query(this.sql.inProgress, (rs) -> {
			String key = rs.getString(1);
			examined.add(key);
			if (key.startsWith(prefix)) {
				IdempotencyRecord record = record(new RecordKey(key), Row.read(rs, 2));
				Duration age = record.age(now);
				if (age == null || age.compareTo(olderThan) >= 0) {
					records.add(record);
				}
			}
		}, (cursor != null) ? cursor : "", limit);
		return new InProgressPage(records, (examined.size() == limit) ? examined.get(limit - 1) : null);
	}

	@Override
	public boolean delete(RecordKey key) {
		return this.ownTransaction.run(() -> this.jdbc.update(this.sql.delete, key.value()) > 0);
	}

	@Override
	public Deletion deleteInProgress(RecordKey key) {
		return deleteWhere(this.sql.deleteInProgress, key, Deletion.COMPLETED);
	}

	@Override
	public Deletion deleteUnlessHeld(RecordKey key) {
		return deleteWhere(this.sql.deleteUnlessHeld, key, Deletion.HELD);
	}

	private Deletion deleteWhere(String deleteSql, RecordKey key, Deletion kept) {
		return this.ownTransaction.run(() -> {
			if (this.jdbc.update(deleteSql, key.value()) > 0) {
				return Deletion.DELETED;
			}
			Row row = select(key.value());
			return (row == null || row.tombstone()) ? Deletion.NONE : kept;
		});
	}

	@Override
	public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result, Duration ttl) {
		return isJoinable() ? this.transactionBound.complete(key, token, fingerprint, result, ttl)
				: completeOnItsOwn(key, token, fingerprint, result, ttl);
	}

	private boolean isJoinable() {
		return this.joinTransaction && this.transactionBound.isTransactionActive();
	}

	boolean completeOnItsOwn(RecordKey key, String token, Fingerprint fingerprint, StoredResult result, Duration ttl) {
		long ttlMillis = millis(ttl);
		return this.ownTransaction.run(() -> {
			if (this.jdbc.update(this.sql.complete, result.bytes(), ttlMillis, key.value(), token) == 1) {
				return true;
			}
			Row row = select(key.value());
			if (row != null) {
				// Resent after a broken connection: finds its own record and succeeds.
				return row.completed() && token.equals(row.token()) && fingerprint.equals(row.fingerprint())
						&& Arrays.equals(result.bytes(), row.result());
			}
			return inserted(this.sql.insertCompleted, key.value(), token, fingerprint.value(), result.bytes(),
					ttlMillis);
		});
	}

	@Override
	public boolean release(RecordKey key, String token) {
		String statement = (ClaimToken.attempt(token) > 1) ? this.sql.releaseTakeover : this.sql.release;
		return this.ownTransaction
			.run(() -> this.jdbc.update(statement, key.value(), token) == 1 || select(key.value()) == null);
	}

	@Override
	public boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease) {
		long leaseMillis = millis(lease);
		return this.ownTransaction.run(() -> {
			if (this.jdbc.update(this.sql.renew, leaseMillis, key.value(), token) == 1) {
				return true;
			}
			// A completion whose reply was lost landed: the row is still its owner's.
			Row row = select(key.value());
			return (row != null) ? row.completed() && token.equals(row.token())
					: inserted(this.sql.insert, key.value(), token, fingerprint.value(), leaseMillis);
		});
	}

	/**
	 * Deletes expired records in batches of {@code batchSize} rows, each batch its own
	 * statement, until a batch finds fewer rows. Safe on many instances at once.
	 * @return the number of rows deleted
	 */
	public int purgeExpired(int batchSize) {
		Assert.isTrue(batchSize > 0, "batchSize must be positive");
		long memoryMillis = -this.takeoverMemory.toMillis();
		int total = 0;
		for (int deleted = batchSize; deleted >= batchSize; total += deleted) {
			deleted = (this.sql.purgeLock != null) ? purgeLockedBatch(memoryMillis, batchSize)
					: this.ownTransaction.run(() -> this.jdbc.update(this.sql.purge, memoryMillis, batchSize));
		}
		return total;
	}

	private int purgeLockedBatch(long memoryMillis, int batchSize) {
		for (int attempt = 1;; attempt++) {
			try {
				// READ COMMITTED of its own: the row locks must last until the delete,
				// and no gap may be locked.
				return this.ownTransaction.template.execute((status) -> {
					List<byte[]> keys = this.jdbc.query(this.sql.purgeLock, (rs, rowNum) -> rs.getBytes(1),
							memoryMillis, batchSize);
					return keys.isEmpty() ? 0 : this.jdbc.update(
							this.sql.purge.replace("%KEYS%", String.join(", ", Collections.nCopies(keys.size(), "?"))),
							keys.toArray());
				});
			}
			catch (PessimisticLockingFailureException ex) {
				// Two purges deadlocked (claims never wait on a purge): the loser's batch
				// is tried again after a random pause that grows with the attempts.
				if (attempt == MAX_PURGE_ATTEMPTS || !OwnTransaction
					.pause(ThreadLocalRandom.current().nextLong(1, 1 + PURGE_BACKOFF_MILLIS * attempt))) {
					throw ex;
				}
			}
		}
	}

	/**
	 * Stops renewing the leases of completions that wait for their transaction to commit,
	 * and listening to transaction managers.
	 */
	public void close() {
		this.transactionBound.close();
	}

	static long millis(Duration duration) {
		return Math.max(1, duration.toMillis());
	}

	final class Statements {

		// Only a take-over writes another token: one that still holds, even past the
		// lease, proves nobody else ran.
		private static final String OWNED = " WHERE idempotency_key = ? AND owner_token = ? AND state = 'P'";

		// Expired by the take-over's own comparison, not the milliseconds left: a row
		// with under 1 ms left reads as 0 yet is not taken over; the claim would loop.
		private static final String ROW = "state, owner_token, fingerprint, result, %MILLIS_LEFT% AS millis_left, "
				+ "CASE WHEN expires_at <= %NOW% THEN 1 ELSE 0 END AS expired";

		// The first condition keeps the range scan on the expires_at index.
		private static final String PURGEABLE = " WHERE expires_at < %NOW% AND (state = 'C' OR expires_at < "
				+ "%NOW_PLUS_MILLIS%)";

		private static final String PURGE_BATCH = "SELECT idempotency_key FROM %TABLE_NAME%" + PURGEABLE
				+ " LIMIT ? FOR UPDATE SKIP LOCKED";

		final String insert = sql("""
				%CLAIM_INSERT% INTO %TABLE_NAME% (idempotency_key, state, owner_token, fingerprint, expires_at)
				VALUES (?, 'P', ?, ?, %NOW_PLUS_MILLIS%)%INSERT_SUFFIX%""");

		final String select = sql("SELECT " + ROW + " FROM %TABLE_NAME% WHERE idempotency_key = ?");

		// PostgreSQL's claim in one round trip: the placeholder inserted, or the row
		// there and whether another transaction wrote or locked it (xmax): the
		// statement's snapshot may miss what a transaction it waited for committed.
		final @Nullable String claim = (JdbcIdempotencyStore.this.dialect != JdbcDialect.POSTGRESQL) ? null
				: "WITH inserted AS (" + this.insert + " RETURNING 1) "
						+ "SELECT 1 AS inserted, NULL AS state, NULL AS owner_token, NULL AS fingerprint, NULL AS result, "
						+ "0 AS millis_left, 0 AS expired, 0 AS touched FROM inserted UNION ALL SELECT 0, "
						+ sql(ROW + ", CASE WHEN xmax::text = '0' THEN 0 ELSE 1 END FROM %TABLE_NAME% "
								+ "WHERE idempotency_key = ? AND NOT EXISTS (SELECT 1 FROM inserted)");

		// A tombstone (state D) is taken over like an expired row, whatever its expiry.
		final String takeOver = sql("""
				UPDATE %TABLE_NAME% SET state = 'P', owner_token = ?, fingerprint = ?, result = NULL,
				expires_at = %NOW_PLUS_MILLIS%
				WHERE idempotency_key = ? AND owner_token = ? AND (expires_at <= %NOW% OR state = 'D')""");

		final String complete = sql(
				"UPDATE %TABLE_NAME% SET state = 'C', result = ?, expires_at = %NOW_PLUS_MILLIS%" + OWNED);

		// A concurrent claim makes this INSERT lose like any other.
		final String insertCompleted = sql("""
				INSERT INTO %TABLE_NAME% (idempotency_key, state, owner_token, fingerprint, result, expires_at)
				VALUES (?, 'C', ?, ?, ?, %NOW_PLUS_MILLIS%)%INSERT_SUFFIX%""");

		final String release = sql("DELETE FROM %TABLE_NAME%" + OWNED);

		// A tombstone, so that the next claim knows it takes over an unfinished call.
		final String releaseTakeover = sql("UPDATE %TABLE_NAME% SET state = 'D'" + OWNED);

		final String renew = sql("UPDATE %TABLE_NAME% SET expires_at = %NOW_PLUS_MILLIS%" + OWNED);

		final String version = sql("SELECT state, owner_token, expires_at FROM %TABLE_NAME% WHERE idempotency_key = ?");

		// The state is a literal, for PostgreSQL to match the partial index's predicate.
		final String inProgress = sql("SELECT idempotency_key, " + ROW + " FROM %TABLE_NAME% WHERE state = 'P' "
				+ "AND idempotency_key > ? AND expires_at > %NOW% ORDER BY idempotency_key LIMIT ?");

		final String delete = sql("DELETE FROM %TABLE_NAME% WHERE idempotency_key = ?");

		// A tombstone is left to the purge, lest its owner write its record anew.
		final String deleteUnlessHeld = sql("""
				DELETE FROM %TABLE_NAME% WHERE idempotency_key = ?
				AND (state = 'C' OR (state = 'P' AND expires_at <= %NOW%))""");

		// The row becomes a tombstone with the owner's token: the owner's renewal cannot
		// write it anew, and complete, release and renew match state P only.
		final String deleteInProgress = sql(
				"UPDATE %TABLE_NAME% SET state = 'D' WHERE idempotency_key = ? AND state = 'P'");

		// MySQL locks a batch, then deletes it by key only (a condition on expires_at
		// could wait on another purge's rows): DELETE ... LIMIT deadlocks with claims.
		final @Nullable String purgeLock = (JdbcIdempotencyStore.this.dialect != JdbcDialect.MYSQL) ? null
				: sql(PURGE_BATCH);

		final String purge = sql(switch (JdbcIdempotencyStore.this.dialect) {
			case H2 -> "DELETE FROM %TABLE_NAME%" + PURGEABLE + " FETCH FIRST ? ROWS ONLY";
			case POSTGRESQL -> "DELETE FROM %TABLE_NAME% WHERE idempotency_key IN (" + PURGE_BATCH + ")";
			case MYSQL -> "DELETE FROM %TABLE_NAME% WHERE idempotency_key IN (%KEYS%)";
		});

		private String sql(String template) {
			return JdbcIdempotencyStore.this.dialect.sql(template, JdbcIdempotencyStore.this.table.tableName);
		}

	}

}
