package io.github.idempotent.store.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.RecoverableDataAccessException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.dao.PessimisticLockingFailureException;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.support.JdbcUtils;
import org.springframework.jdbc.support.MetaDataAccessException;
import org.springframework.transaction.CannotCreateTransactionException;
import org.springframework.transaction.NoTransactionException;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.transaction.interceptor.TransactionAspectSupport;
import org.springframework.transaction.support.ResourceHolderSupport;
import org.springframework.transaction.support.ResourceTransactionManager;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.Assert;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.InspectableIdempotencyStore;
import io.github.idempotent.store.StoredResult;

/**
 * {@link IdempotencyStore} on a relational table (see the {@code schema-*.sql} scripts
 * next to this class): the primary key is the scoped key, so the database's unique
 * constraint decides which of many concurrent claims wins.
 * <p>
 * A claim is an INSERT; when the row exists and has expired (a lease not renewed, or a
 * result past its TTL) it is taken over by an UPDATE conditional on the owner token that
 * was read, never by delete-then-insert, so two claimers can never both win. Complete,
 * release and renew are UPDATE or DELETE statements conditional on the token and the
 * in-progress state. Every time is the database's clock. An operator's forced delete
 * leaves a tombstone (state {@code D}) in place of the row in progress, which fences its
 * owner and which a claim takes over.
 * <p>
 * A claim that takes over a row in progress or a tombstone (a call that never finished)
 * reports the attempt after it and when that one started; both travel in the owner token
 * ({@link ClaimToken}), so the table needs no column for them. The purge keeps such rows
 * for the {@link #setTakeoverMemory take-over memory} after their lease ran out.
 * <p>
 * Claims, releases and renewals always commit on their own, even when the caller runs in
 * a transaction on the same {@link DataSource}: a claim must be visible to concurrent
 * duplicates at once. With {@link #setJoinTransaction(boolean) joinTransaction}, a
 * completion inside such a transaction is tied to it: the stored result commits with the
 * business rows, a rollback releases the claim, and a second call with the same key in
 * the same transaction replays the result without waiting for the row its own transaction
 * has locked. The completion is written in the caller's transaction when that transaction
 * can see and update the claim's latest version (always at READ COMMITTED; at REPEATABLE
 * READ or SERIALIZABLE only if its snapshot postdates the claim and every renewal, else
 * PostgreSQL reports no row or a serialization failure). When it cannot, the completion
 * is written right after the commit, and until then the lease is renewed; a crash between
 * that commit and that write leaves the key to expire with its lease, after which a retry
 * runs the method again.
 */
public class JdbcIdempotencyStore implements InspectableIdempotencyStore {

	/**
	 * Longest key, matching the key column of the shipped schemas.
	 */
	public static final int MAX_KEY_LENGTH = 512;

	/**
	 * How long after its lease ran out a call that never finished is remembered by
	 * default: as long as results are kept by default, since a client that retries a call
	 * retries it within the time its result would be replayed.
	 */
	public static final Duration DEFAULT_TAKEOVER_MEMORY = Duration.ofHours(24);

	/**
	 * Default name of the table.
	 */
	public static final String DEFAULT_TABLE_NAME = "idempotency_record";

	private static final Pattern TABLE_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_$]*(\\.[A-Za-z_][A-Za-z0-9_$]*)?");

	private static final Log logger = LogFactory.getLog(JdbcIdempotencyStore.class);

	// Each failed attempt means another claimer changed the row in between (took it
	// over, released or purged it); the next attempt reads what that claimer left.
	private static final int MAX_CLAIM_ATTEMPTS = 10;

	private static final int MAX_PURGE_ATTEMPTS = 8;

	private static final long PURGE_BACKOFF_MILLIS = 20;

	// Lease of a completion that waits for its transaction to commit, when the claim
	// was not made in that transaction (so its lease is unknown): the default lease.
	private static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);

	private static final String INSERT = """
			INSERT INTO %TABLE_NAME% (idempotency_key, state, owner_token, fingerprint, expires_at)
			VALUES (?, 'P', ?, ?, %NOW_PLUS_MILLIS%)%INSERT_SUFFIX%""";

	// Whether the row has expired is decided by the same comparison as the take-over's,
	// not by the milliseconds left: a row with less than 1 ms left reads as 0 ms left
	// yet is not expired for the take-over, and the claim would loop on it.
	private static final String SELECT = """
			SELECT state, owner_token, fingerprint, result, %MILLIS_LEFT% AS millis_left,
			CASE WHEN expires_at <= %NOW% THEN 1 ELSE 0 END AS expired
			FROM %TABLE_NAME% WHERE idempotency_key = ?""";

	// A tombstone (state D) is taken over like an expired row, whatever its expiry.
	private static final String TAKE_OVER = """
			UPDATE %TABLE_NAME% SET state = 'P', owner_token = ?, fingerprint = ?, result = NULL,
			expires_at = %NOW_PLUS_MILLIS%
			WHERE idempotency_key = ? AND owner_token = ? AND (expires_at <= %NOW% OR state = 'D')""";

	// Complete, release and renew hold for the owner token even past the lease: only a
	// take-over writes another token, so a token that still holds proves nobody else ran.
	private static final String COMPLETE = """
			UPDATE %TABLE_NAME% SET state = 'C', result = ?, expires_at = %NOW_PLUS_MILLIS%
			WHERE idempotency_key = ? AND owner_token = ? AND state = 'P'""";

	// A row purged after its lease expired, with nobody claiming it since, is written
	// anew by its owner; a concurrent claim makes this INSERT lose like any other.
	private static final String INSERT_COMPLETED = """
			INSERT INTO %TABLE_NAME% (idempotency_key, state, owner_token, fingerprint, result, expires_at)
			VALUES (?, 'C', ?, ?, ?, %NOW_PLUS_MILLIS%)%INSERT_SUFFIX%""";

	private static final String RELEASE = """
			DELETE FROM %TABLE_NAME%
			WHERE idempotency_key = ? AND owner_token = ? AND state = 'P'""";

	// The release of a takeover (attempt 2 or later, read from its token): the row
	// becomes a tombstone, as with a forced delete, rather than going, so that the next
	// claim still knows it takes over a call that never finished (which attempt, and
	// when it started) instead of running as attempt 1 and repeating what the earlier
	// attempts did. The purge keeps it for the take-over memory after its lease, as any
	// row of a call that never finished.
	private static final String RELEASE_TAKEOVER = """
			UPDATE %TABLE_NAME% SET state = 'D'
			WHERE idempotency_key = ? AND owner_token = ? AND state = 'P'""";

	private static final String RENEW = """
			UPDATE %TABLE_NAME% SET expires_at = %NOW_PLUS_MILLIS%
			WHERE idempotency_key = ? AND owner_token = ? AND state = 'P'""";

	// What changes with every claim, renewal and completion of a row.
	private static final String VERSION = """
			SELECT state, owner_token, expires_at FROM %TABLE_NAME% WHERE idempotency_key = ?""";

	// Served by the in-progress index of the schema (partial on PostgreSQL); the state
	// is a literal so that PostgreSQL can match the partial index's predicate.
	private static final String IN_PROGRESS = """
			SELECT idempotency_key, owner_token, fingerprint, %MILLIS_LEFT% AS millis_left
			FROM %TABLE_NAME% WHERE state = 'P' AND idempotency_key > ? AND expires_at > %NOW%
			ORDER BY idempotency_key LIMIT ?""";

	private static final String DELETE = """
			DELETE FROM %TABLE_NAME% WHERE idempotency_key = ?""";

	// A record in progress whose lease ran out is no longer held: the next claim would
	// take it over.
	// A tombstone is left to the purge: deleting it would let its owner write its
	// record anew.
	private static final String DELETE_UNLESS_HELD = """
			DELETE FROM %TABLE_NAME% WHERE idempotency_key = ?
			AND (state = 'C' OR (state = 'P' AND expires_at <= %NOW%))""";

	// An operator's forced delete: the row becomes a tombstone (state D) that keeps the
	// owner's token (the purge deletes it once the take-over memory has passed after the
	// lease it had), rather than going; the claim that takes it over reads from the token
	// which attempt it is. Its owner, if alive,
	// renews within a third of the lease, and would write a vanished row anew (as the
	// owner of a purged row does), undoing the deletion; complete, release and renew
	// match state P only, so they find the tombstone and fail. A claim takes it over.
	private static final String DELETE_IN_PROGRESS = """
			UPDATE %TABLE_NAME% SET state = 'D'
			WHERE idempotency_key = ? AND state = 'P'""";

	private static final String EXISTS = """
			SELECT COUNT(*) FROM %TABLE_NAME% WHERE idempotency_key = ?""";

	// Whether a record is left after an operator's delete: a tombstone is none.
	// A completion whose reply was lost landed: the row is still its owner's.
	private static final String COMPLETED_BY = """
			SELECT COUNT(*) FROM %TABLE_NAME% WHERE idempotency_key = ? AND owner_token = ? AND state = 'C'""";

	private static final String RECORD_EXISTS = """
			SELECT COUNT(*) FROM %TABLE_NAME% WHERE idempotency_key = ? AND state <> 'D'""";

	private final DataSource dataSource;

	private final JdbcOperations jdbc;

	private final TransactionTemplate ownTransaction;

	private final JdbcDialect dialect;

	private final String tableName;

	private final String insertSql;

	private final String inProgressSql;

	private final String deleteSql;

	private final String deleteUnlessHeldSql;

	private final String deleteInProgressSql;

	private final String selectSql;

	private final String takeOverSql;

	private final String completeSql;

	private final String insertCompletedSql;

	private final String existsSql;

	private final String recordExistsSql;

	private final String versionSql;

	private final String releaseSql;

	private final String releaseTakeoverSql;

	private final String renewSql;

	private final String completedBySql;

	private final String purgeSql;

	private final String purgeLockSql;

	private volatile boolean joinTransaction;

	private volatile Duration takeoverMemory = DEFAULT_TAKEOVER_MEMORY;

	/**
	 * Key of this store's {@link TransactionState}s among the resources bound to a
	 * thread.
	 */
	private final Object transactionStatesKey = new Object();

	private ScheduledExecutorService renewals;

	private volatile Boolean innodbSnapshotIsolation;

	/**
	 * Creates a store on {@code tableName}, with the dialect of the database behind
	 * {@code dataSource} (read from its metadata once, here).
	 */
	public JdbcIdempotencyStore(DataSource dataSource, String tableName) {
		this(dataSource, tableName, detectDialect(dataSource));
	}

	public JdbcIdempotencyStore(DataSource dataSource, String tableName, JdbcDialect dialect) {
		this(dataSource, new JdbcTemplate(requireDataSource(dataSource)), new DataSourceTransactionManager(dataSource),
				tableName, dialect);
	}

	/**
	 * Creates a store that runs its statements through {@code jdbc} and its own
	 * transactions through {@code transactionManager}: the application's, so that their
	 * settings (timeouts, exception translation, a listener) apply to the store too.
	 * @param dataSource the database of the table
	 * @param jdbc operations on {@code dataSource}
	 * @param transactionManager a transaction manager of {@code dataSource} itself (a
	 * {@code DataSourceTransactionManager} or {@code JdbcTransactionManager}); the store
	 * runs the work that must commit on its own (claims, releases, renewals, purges) in
	 * new READ COMMITTED transactions of it
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
		this.dataSource = dataSource;
		this.jdbc = jdbc;
		this.ownTransaction = new TransactionTemplate(transactionManager);
		this.ownTransaction.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		// A claim may read the row twice; under REPEATABLE READ (MySQL's default) the
		// second read would not see the row another claimer just wrote.
		this.ownTransaction.setIsolationLevel(TransactionDefinition.ISOLATION_READ_COMMITTED);
		this.dialect = dialect;
		this.tableName = tableName;
		this.insertSql = dialect.sql(INSERT, tableName);
		this.selectSql = dialect.sql(SELECT, tableName);
		this.takeOverSql = dialect.sql(TAKE_OVER, tableName);
		this.completeSql = dialect.sql(COMPLETE, tableName);
		this.insertCompletedSql = dialect.sql(INSERT_COMPLETED, tableName);
		this.existsSql = dialect.sql(EXISTS, tableName);
		this.recordExistsSql = dialect.sql(RECORD_EXISTS, tableName);
		this.inProgressSql = dialect.sql(IN_PROGRESS, tableName);
		this.deleteSql = dialect.sql(DELETE, tableName);
		this.deleteUnlessHeldSql = dialect.sql(DELETE_UNLESS_HELD, tableName);
		this.deleteInProgressSql = dialect.sql(DELETE_IN_PROGRESS, tableName);
		this.versionSql = dialect.sql(VERSION, tableName);
		this.releaseSql = dialect.sql(RELEASE, tableName);
		this.releaseTakeoverSql = dialect.sql(RELEASE_TAKEOVER, tableName);
		this.renewSql = dialect.sql(RENEW, tableName);
		this.completedBySql = dialect.sql(COMPLETED_BY, tableName);
		this.purgeSql = dialect.purgeSql(tableName);
		this.purgeLockSql = dialect.purgeLockSql(tableName);
	}

	private static DataSource requireDataSource(DataSource dataSource) {
		Assert.notNull(dataSource, "dataSource must not be null");
		return dataSource;
	}

	/**
	 * The dialect of the database behind {@code dataSource}, from its metadata.
	 */
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
	 * Sets whether a completion inside a transaction on this store's {@link DataSource}
	 * is written in that transaction (and a rollback releases the claim) rather than
	 * committed on its own at once.
	 */
	public void setJoinTransaction(boolean joinTransaction) {
		this.joinTransaction = joinTransaction;
	}

	public boolean isJoinTransaction() {
		return this.joinTransaction;
	}

	/**
	 * Sets how long after its lease ran out the row of a call that never finished (its
	 * owner died or hung, or an operator deleted it with force) is kept from the purge,
	 * so that a claim of its key knows it takes that call over: which attempt it is, and
	 * when the last one started. Such rows are few (calls that never finished) and cost a
	 * claim nothing: it takes them over as before. Once purged, the next claim is attempt
	 * 1 again.
	 */
	public void setTakeoverMemory(Duration takeoverMemory) {
		Assert.isTrue(takeoverMemory != null && !takeoverMemory.isNegative(), "takeoverMemory must not be negative");
		this.takeoverMemory = takeoverMemory;
	}

	public Duration getTakeoverMemory() {
		return this.takeoverMemory;
	}

	public JdbcDialect getDialect() {
		return this.dialect;
	}

	public String getTableName() {
		return this.tableName;
	}

	@Override
	public int maxKeyLength() {
		return MAX_KEY_LENGTH;
	}

	@Override
	public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
		boolean joinable = isJoinable();
		if (joinable) {
			ClaimResult pending = claimCompletedOnThisThread(key.value(), lease);
			if (pending != null) {
				return pending;
			}
		}
		ClaimResult claim = inOwnTransaction(() -> doClaim(key.value(), fingerprint.value(), millis(lease)));
		if (joinable && claim instanceof ClaimResult.Acquired acquired) {
			// Remembered for a completion that has to wait for the commit: it renews the
			// lease until then.
			currentTransactionState().leases.put(acquired.token(), lease);
		}
		return claim;
	}

	/**
	 * The answer to a claim of a key that a transaction on this thread has completed and
	 * not yet committed: the same transaction replays its own result; another one (a
	 * REQUIRES_NEW inside it) is told the key is in progress, as it is to everyone else
	 * until the commit. Never the database's answer: its row may be locked by the very
	 * transaction this thread is waiting in.
	 */
	private ClaimResult claimCompletedOnThisThread(String key, Duration lease) {
		@SuppressWarnings("unchecked")
		Map<Object, TransactionState> states = (Map<Object, TransactionState>) TransactionSynchronizationManager
			.getResource(this.transactionStatesKey);
		if (states == null) {
			return null;
		}
		Object current = TransactionSynchronizationManager.getResource(this.dataSource);
		for (TransactionState state : states.values()) {
			PendingCompletion pending = state.completions.get(key);
			if (pending != null) {
				Fingerprint stored = new Fingerprint(pending.fingerprint);
				return (state.transaction == current) ? new ClaimResult.Completed(stored, pending.result)
						: new ClaimResult.InProgress(stored, lease);
			}
		}
		return null;
	}

	private ClaimResult doClaim(String key, String fingerprint, long leaseMillis) {
		// The token carries the claim time (this instance's clock) and the attempt (see
		// ClaimToken): the in-progress listing reads the claim time, the take-over of
		// this claim both, and a vanished row written anew by its owner keeps them.
		Instant claimedAt = Instant.now();
		String first = ClaimToken.issue(claimedAt, 1);
		for (int attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt++) {
			if (insert(key, first, fingerprint, leaseMillis)) {
				return new ClaimResult.Acquired(first);
			}
			Row row = select(key);
			if (row == null) {
				continue; // released or purged since the insert: insert again
			}
			if (!row.expired() && !row.tombstone()) {
				Fingerprint stored = new Fingerprint(row.fingerprint());
				return row.completed() ? new ClaimResult.Completed(stored, new StoredResult(row.result()))
						: new ClaimResult.InProgress(stored, Duration.ofMillis(Math.max(1, row.millisLeft())));
			}
			// A row in progress past its lease, or the tombstone of one an operator
			// deleted, is a call that never finished: this claim is the attempt after it.
			// An expired result was a call that finished: its key starts again at 1.
			ClaimResult.Acquired acquired = row.completed() ? new ClaimResult.Acquired(first)
					: new ClaimResult.Acquired(ClaimToken.issue(claimedAt, ClaimToken.next(row.token())),
							ClaimToken.next(row.token()), ClaimToken.claimedAt(row.token()));
			// Expired: conditional on the token read, so of all the claimers that saw
			// this row expired exactly one takes it over. It fails only if another
			// claimer changed the row meanwhile: time only moves the row further into
			// the past (and H2's clock, fixed for a transaction, does not move at all).
			if (this.jdbc.update(this.takeOverSql, acquired.token(), fingerprint, leaseMillis, key, row.token()) == 1) {
				return acquired;
			}
		}
		throw new IllegalStateException("Could not claim key '" + key + "' in " + MAX_CLAIM_ATTEMPTS
				+ " attempts: its row changed between every read and write");
	}

	private boolean insert(String key, String token, String fingerprint, long leaseMillis) {
		try {
			return this.jdbc.update(this.insertSql, key, token, fingerprint, leaseMillis) == 1;
		}
		catch (DuplicateKeyException ex) {
			// H2, MySQL and MariaDB: the statement failed, the transaction (if any) did
			// not; PostgreSQL never gets here (ON CONFLICT DO NOTHING).
			return false;
		}
	}

	@Override
	public Optional<IdempotencyRecord> inspect(RecordKey key) {
		Row row = select(key.value());
		if (row == null || row.expired() || row.tombstone()) {
			// A tombstone of a forced delete shows nothing: no call holds the key.
			return Optional.empty();
		}
		return Optional.of(new IdempotencyRecord(key,
				row.completed() ? IdempotencyRecord.State.COMPLETED : IdempotencyRecord.State.IN_PROGRESS,
				new Fingerprint(row.fingerprint()), row.completed() ? null : ClaimToken.claimedAt(row.token()),
				Duration.ofMillis(Math.max(0, row.millisLeft())),
				row.completed() ? new StoredResult(row.result()) : null));
	}

	/**
	 * The rows in progress in key order, {@code limit} at a time, through the index on
	 * the in-progress rows; the claim time is read from the token, so the age is filtered
	 * here, not in SQL. The cursor is the last key of the previous page.
	 */
	@Override
	public InProgressPage findInProgress(String keyPrefix, Duration olderThan, @Nullable String cursor, int limit) {
		Assert.isTrue(limit > 0, "limit must be positive");
		String prefix = keyPrefix + ":";
		Instant now = Instant.now();
		List<String> examined = new ArrayList<>();
		List<IdempotencyRecord> records = new ArrayList<>();
		this.jdbc.query(this.inProgressSql, (rs) -> {
			String key = rs.getString(1);
			examined.add(key);
			if (!key.startsWith(prefix)) {
				return;
			}
			IdempotencyRecord record = new IdempotencyRecord(new RecordKey(key), IdempotencyRecord.State.IN_PROGRESS,
					new Fingerprint(rs.getString(3)), ClaimToken.claimedAt(rs.getString(2)),
					Duration.ofMillis(Math.max(0, rs.getLong(4))), null);
			Duration age = record.age(now);
			if (age == null || age.compareTo(olderThan) >= 0) {
				records.add(record);
			}
		}, (cursor != null) ? cursor : "", limit);
		return new InProgressPage(records, (examined.size() == limit) ? examined.get(limit - 1) : null);
	}

	@Override
	public boolean delete(RecordKey key) {
		return inOwnTransaction(() -> this.jdbc.update(this.deleteSql, key.value()) > 0);
	}

	@Override
	public Deletion deleteInProgress(RecordKey key) {
		return deleteWhere(this.deleteInProgressSql, key, Deletion.COMPLETED);
	}

	@Override
	public Deletion deleteUnlessHeld(RecordKey key) {
		return deleteWhere(this.deleteUnlessHeldSql, key, Deletion.HELD);
	}

	/**
	 * Runs a conditional {@code DELETE} of {@code key}; {@code kept} is the answer when a
	 * row remains.
	 */
	private Deletion deleteWhere(String deleteSql, RecordKey key, Deletion kept) {
		return inOwnTransaction(() -> {
			if (this.jdbc.update(deleteSql, key.value()) > 0) {
				return Deletion.DELETED;
			}
			// Only what to report: nothing was deleted either way.
			return (this.jdbc.queryForObject(this.recordExistsSql, Integer.class, key.value()) > 0) ? kept
					: Deletion.NONE;
		});
	}

	private Row select(String key) {
		List<Row> rows = this.jdbc.query(this.selectSql,
				(rs, rowNum) -> new Row("C".equals(rs.getString(1)), "D".equals(rs.getString(1)), rs.getString(2),
						rs.getString(3), rs.getBytes(4), rs.getLong(5), rs.getInt(6) == 1),
				key);
		return rows.isEmpty() ? null : rows.get(0);
	}

	@Override
	public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result, Duration ttl) {
		if (isJoinable()) {
			return completeWithTransaction(key, token, fingerprint, result, ttl);
		}
		return inOwnTransaction(() -> doComplete(key.value(), token, fingerprint.value(), result.bytes(), millis(ttl)));
	}

	private boolean isJoinable() {
		return this.joinTransaction && TransactionSynchronizationManager.isActualTransactionActive()
				&& TransactionSynchronizationManager.isSynchronizationActive()
				&& TransactionSynchronizationManager.hasResource(this.dataSource);
	}

	private boolean completeWithTransaction(RecordKey key, String token, Fingerprint fingerprint, StoredResult result,
			Duration ttl) {
		TransactionState state = currentTransactionState();
		Duration lease = state.leases.getOrDefault(token, DEFAULT_LEASE);
		PendingCompletion pending = new PendingCompletion(key, token, fingerprint.value(), result, ttl, lease);
		// From here on a rollback releases the claim, and a claim of the same key on this
		// thread is answered without the database.
		state.completions.put(key.value(), pending);
		try {
			if (completeInCallersTransaction(key.value(), token, result.bytes(), millis(ttl))) {
				return true;
			}
		}
		catch (DataAccessException ex) {
			// The database has aborted or rolled back the caller's transaction (or may
			// have: no savepoint to return to). It must not commit what is left of it,
			// or later statements, as if the method's writes were in it: rolled back, it
			// releases the claim and the retry runs the method again.
			markRollbackOnly();
			logger.warn("Could not complete key '" + key + "' in its transaction, which is now rollback-only "
					+ "(its commit will fail and release the key): " + ex);
			return true;
		}
		// The caller's transaction cannot see the claim, or cannot update it without a
		// serialization failure: complete after the commit instead. Renewing now also
		// tells a take-over (false) from a row this transaction cannot see, and writes
		// anew a row that vanished, so that nobody else claims it meanwhile.
		boolean owned;
		try {
			owned = renew(key, token, fingerprint, lease);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not renew the lease of key '" + key + "' while its transaction is open; "
					+ "its result is stored after the commit: " + ex);
			owned = true;
		}
		if (!owned) {
			state.completions.remove(key.value());
			return false;
		}
		pending.completeAfterCommit(renewals());
		return true;
	}

	/**
	 * Completes in the caller's transaction, as one UPDATE of the claim's row, when that
	 * transaction can update the row's latest version without a failure that would undo
	 * the caller's own work:
	 * <ul>
	 * <li>at READ COMMITTED or below every statement sees the latest version;</li>
	 * <li>InnoDB's UPDATE reads the latest committed version at every level, unless
	 * MariaDB's {@code innodb_snapshot_isolation} is on: then a locking read of a row
	 * changed since the transaction's snapshot fails and rolls back the whole
	 * transaction, and at SERIALIZABLE every read is a locking read, so the row is not
	 * touched at all;</li>
	 * <li>otherwise (PostgreSQL and H2 at REPEATABLE READ or SERIALIZABLE, MariaDB at
	 * REPEATABLE READ with snapshot isolation) only if the row the transaction's snapshot
	 * sees is the latest committed one: a snapshot older than the claim or than a renewal
	 * makes the UPDATE find no row or fail.</li>
	 * </ul>
	 * In the last case the UPDATE runs behind a savepoint, so that a failure left
	 * (another claimer's change in between) undoes only this statement. The savepoint is
	 * not released: the commit releases it, and releasing costs one more round trip.
	 * @return whether the row was updated in the caller's transaction; {@code false} if
	 * the completion has to wait for the commit
	 * @throws DataAccessException if the UPDATE failed and no savepoint undid it
	 */
	private boolean completeInCallersTransaction(String key, String token, byte[] result, long ttlMillis) {
		Integer declared = TransactionSynchronizationManager.getCurrentTransactionIsolationLevel();
		int isolation = (declared != null) ? declared
				: this.jdbc.execute((ConnectionCallback<Integer>) Connection::getTransactionIsolation);
		boolean savepoint = false;
		if (isolation > TransactionDefinition.ISOLATION_READ_COMMITTED
				&& (this.dialect != JdbcDialect.MYSQL || innodbSnapshotIsolation())) {
			if (isolation >= TransactionDefinition.ISOLATION_SERIALIZABLE && this.dialect == JdbcDialect.MYSQL) {
				return false;
			}
			if (!snapshotSeesLatest(key)) {
				return false;
			}
			savepoint = true;
		}
		return update(key, token, result, ttlMillis, savepoint);
	}

	private boolean update(String key, String token, byte[] result, long ttlMillis, boolean withSavepoint) {
		return Boolean.TRUE.equals(this.jdbc.execute((ConnectionCallback<Boolean>) (connection) -> {
			Savepoint savepoint = withSavepoint ? connection.setSavepoint() : null;
			try (PreparedStatement update = connection.prepareStatement(this.completeSql)) {
				update.setBytes(1, result);
				update.setLong(2, ttlMillis);
				update.setString(3, key);
				update.setString(4, token);
				return update.executeUpdate() == 1;
			}
			catch (SQLException ex) {
				if (savepoint == null) {
					throw ex;
				}
				try {
					connection.rollback(savepoint);
				}
				catch (SQLException lost) {
					// The database rolled back the whole transaction, savepoint included.
					ex.addSuppressed(lost);
					throw ex;
				}
				if (logger.isDebugEnabled()) {
					logger.debug("Key '" + key + "' cannot be completed in its transaction (" + ex.getMessage()
							+ "); storing its result after the commit");
				}
				return false;
			}
		}));
	}

	/**
	 * Whether MariaDB's {@code innodb_snapshot_isolation} is on (the default from
	 * 11.6.2), read once; MySQL has no such variable and behaves as if it were off.
	 */
	private boolean innodbSnapshotIsolation() {
		Boolean on = this.innodbSnapshotIsolation;
		if (on == null) {
			try {
				Integer value = inOwnTransaction(
						() -> this.jdbc.queryForObject("SELECT @@innodb_snapshot_isolation", Integer.class));
				on = value != null && value == 1;
			}
			catch (DataAccessException ex) {
				on = false;
			}
			this.innodbSnapshotIsolation = on;
		}
		return on;
	}

	/**
	 * Whether the caller's transaction sees the claim's row as last committed: the row
	 * read with the transaction's snapshot (a plain, non-locking read) against the row
	 * read on a connection of its own.
	 */
	private boolean snapshotSeesLatest(String key) {
		List<Version> seen = this.jdbc.query(this.versionSql, VERSION_MAPPER, key);
		if (seen.isEmpty()) {
			return false;
		}
		List<Version> latest = inOwnTransaction(() -> this.jdbc.query(this.versionSql, VERSION_MAPPER, key));
		return seen.equals(latest);
	}

	private void markRollbackOnly() {
		if (TransactionSynchronizationManager.getResource(this.dataSource) instanceof ResourceHolderSupport holder) {
			// Enough for DataSourceTransactionManager and JdbcTransactionManager.
			holder.setRollbackOnly();
		}
		try {
			TransactionAspectSupport.currentTransactionStatus().setRollbackOnly();
		}
		catch (NoTransactionException ex) {
			// Not a @Transactional method: the connection holder's flag has to do.
		}
	}

	private boolean doComplete(String key, String token, String fingerprint, byte[] result, long ttlMillis) {
		if (this.jdbc.update(this.completeSql, result, ttlMillis, key, token) == 1) {
			return true;
		}
		Row row = select(key);
		if (row != null) {
			// A completion sent again after its connection broke before the answer (the
			// executor does so) finds the very record it would write, under its own
			// token, and succeeds instead of reporting a lost lease.
			return row.completed() && token.equals(row.token()) && fingerprint.equals(row.fingerprint())
					&& Arrays.equals(result, row.result());
		}
		try {
			return this.jdbc.update(this.insertCompletedSql, key, token, fingerprint, result, ttlMillis) == 1;
		}
		catch (DuplicateKeyException ex) {
			return false;
		}
	}

	@Override
	public boolean release(RecordKey key, String token) {
		String sql = (ClaimToken.attempt(token) > 1) ? this.releaseTakeoverSql : this.releaseSql;
		return inOwnTransaction(() -> this.jdbc.update(sql, key.value(), token) == 1 || !exists(key.value()));
	}

	@Override
	public boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease) {
		return inOwnTransaction(() -> {
			long leaseMillis = millis(lease);
			if (this.jdbc.update(this.renewSql, leaseMillis, key.value(), token) == 1) {
				return true;
			}
			Integer completed = this.jdbc.queryForObject(this.completedBySql, Integer.class, key.value(), token);
			if (completed != null && completed > 0) {
				return true;
			}
			return !exists(key.value()) && insert(key.value(), token, fingerprint.value(), leaseMillis);
		});
	}

	private boolean exists(String key) {
		Integer count = this.jdbc.queryForObject(this.existsSql, Integer.class, key);
		return count != null && count > 0;
	}

	/**
	 * Deletes expired records in batches of {@code batchSize} rows (results past their
	 * TTL; rows of calls that never finished once the {@link #setTakeoverMemory take-over
	 * memory} has passed since their lease ran out), each batch its own statement (and so
	 * its own short transaction), until a batch finds fewer rows. Safe to run on many
	 * instances at once: a row that is taken over meanwhile is no longer expired and
	 * stays.
	 * @return the number of rows deleted
	 */
	public int purgeExpired(int batchSize) {
		Assert.isTrue(batchSize > 0, "batchSize must be positive");
		int total = 0;
		while (true) {
			long memoryMillis = -this.takeoverMemory.toMillis();
			int deleted = (this.purgeLockSql != null) ? purgeLockedBatch(memoryMillis, batchSize)
					: inOwnTransaction(() -> this.jdbc.update(this.purgeSql, memoryMillis, batchSize));
			total += deleted;
			if (deleted < batchSize) {
				return total;
			}
		}
	}

	private int purgeLockedBatch(long memoryMillis, int batchSize) {
		for (int attempt = 1;; attempt++) {
			try {
				return lockAndPurgeBatch(memoryMillis, batchSize);
			}
			catch (PessimisticLockingFailureException ex) {
				// Two purges can still deadlock on each other (InnoDB may keep locks on
				// rows its skip-locked scan passed over); the loser's batch was rolled
				// back whole and is simply tried again. Claims never wait on a purge
				// here: every row it deletes it has locked before.
				if (attempt == MAX_PURGE_ATTEMPTS) {
					throw ex;
				}
				// Purges that deadlocked together would likely do so again at once:
				// a random pause, growing with the attempts, lets one go first.
				try {
					Thread.sleep(ThreadLocalRandom.current().nextLong(1, 1 + PURGE_BACKOFF_MILLIS * attempt));
				}
				catch (InterruptedException interrupted) {
					Thread.currentThread().interrupt();
					throw ex;
				}
			}
		}
	}

	private int lockAndPurgeBatch(long memoryMillis, int batchSize) {
		// Always a transaction of its own at READ COMMITTED, even without a caller's: the
		// row locks of the query must last until the delete, and no gap may be locked.
		Integer deleted = this.ownTransaction.execute((status) -> {
			List<byte[]> keys = this.jdbc.query(this.purgeLockSql, (rs, rowNum) -> rs.getBytes(1), memoryMillis,
					batchSize);
			if (keys.isEmpty()) {
				return 0;
			}
			String delete = this.purgeSql.replace("%KEYS%", String.join(", ", Collections.nCopies(keys.size(), "?")));
			return this.jdbc.update(delete, keys.toArray());
		});
		return (deleted != null) ? deleted : 0;
	}

	/**
	 * Stops renewing the leases of completions that wait for their transaction to commit.
	 */
	public void close() {
		synchronized (this.transactionStatesKey) {
			if (this.renewals != null) {
				this.renewals.shutdownNow();
			}
		}
	}

	private ScheduledExecutorService renewals() {
		synchronized (this.transactionStatesKey) {
			if (this.renewals == null) {
				ScheduledThreadPoolExecutor renewals = new ScheduledThreadPoolExecutor(1, (task) -> {
					Thread thread = new Thread(task, "idempotent-jdbc-commit-wait");
					thread.setDaemon(true);
					return thread;
				});
				renewals.setRemoveOnCancelPolicy(true);
				this.renewals = renewals;
			}
			return this.renewals;
		}
	}

	private TransactionState currentTransactionState() {
		@SuppressWarnings("unchecked")
		Map<Object, TransactionState> states = (Map<Object, TransactionState>) TransactionSynchronizationManager
			.getResource(this.transactionStatesKey);
		if (states == null) {
			states = new IdentityHashMap<>();
			TransactionSynchronizationManager.bindResource(this.transactionStatesKey, states);
		}
		// The connection holder of the data source identifies the transaction, also
		// across a REQUIRES_NEW transaction that suspends it.
		Object transaction = TransactionSynchronizationManager.getResource(this.dataSource);
		TransactionState state = states.get(transaction);
		if (state == null) {
			state = new TransactionState(transaction, states);
			states.put(transaction, state);
			TransactionSynchronizationManager.registerSynchronization(state);
		}
		return state;
	}

	/**
	 * Runs {@code action} so that its statements commit on their own: as autocommit
	 * statements when no transaction holds a connection of this data source on this
	 * thread (no transaction overhead on the common path), else in a new transaction on
	 * another connection.
	 */
	private <T> T inOwnTransaction(Supplier<T> action) {
		if (!TransactionSynchronizationManager.hasResource(this.dataSource)) {
			return action.get();
		}
		try {
			return this.ownTransaction.execute((status) -> action.get());
		}
		catch (TransactionSystemException ex) {
			// A statement whose connection broke leaves a transaction that cannot be
			// rolled back either; the statement's failure is the one that says what
			// happened (the database was unreachable: the executor sends it again).
			if (ex.getApplicationException() instanceof RuntimeException failure) {
				failure.addSuppressed(ex);
				throw failure;
			}
			throw ex;
		}
	}

	private static final RowMapper<Version> VERSION_MAPPER = (rs, rowNum) -> new Version(rs.getString(1),
			rs.getString(2), rs.getObject(3));

	private static long millis(Duration duration) {
		return Math.max(1, duration.toMillis());
	}

	private record Version(String state, String token, Object expiresAt) {
	}

	private record Row(boolean completed, boolean tombstone, String token, String fingerprint, byte[] result,
			long millisLeft, boolean expired) {

		@Override
		public byte[] result() {
			return (this.result != null) ? this.result : new byte[0];
		}

	}

	/**
	 * What one transaction on one thread has to do when it ends: the leases of the claims
	 * made in it, and its completions, to release on a rollback or, for those that could
	 * not be written in it, to write after its commit. Bound to the thread (not to the
	 * transaction's synchronizations) so that a REQUIRES_NEW transaction inside it still
	 * sees the keys it holds.
	 */
	private final class TransactionState implements TransactionSynchronization {

		private final Object transaction;

		private final Map<Object, TransactionState> states;

		private final Map<String, Duration> leases = new LinkedHashMap<>();

		private final Map<String, PendingCompletion> completions = new LinkedHashMap<>();

		TransactionState(Object transaction, Map<Object, TransactionState> states) {
			this.transaction = transaction;
			this.states = states;
		}

		@Override
		public void afterCompletion(int status) {
			this.states.remove(this.transaction);
			if (this.states.isEmpty()) {
				TransactionSynchronizationManager
					.unbindResourceIfPossible(JdbcIdempotencyStore.this.transactionStatesKey);
			}
			for (PendingCompletion pending : this.completions.values()) {
				pending.transactionEnded(status == STATUS_COMMITTED);
			}
		}

	}

	/**
	 * A completion tied to the caller's transaction: written in it (nothing left to do on
	 * commit), or to be written after it, its lease renewed meanwhile.
	 */
	private final class PendingCompletion {

		private final RecordKey key;

		private final String token;

		private final String fingerprint;

		private final StoredResult result;

		private final Duration ttl;

		private final Duration lease;

		private ScheduledFuture<?> renewal;

		private boolean afterCommit;

		private boolean ended;

		/**
		 * Whether a completion after the commit is being sent: a renewal then would meet
		 * the completed row and report a take-over.
		 */
		private boolean completing;

		PendingCompletion(RecordKey key, String token, String fingerprint, StoredResult result, Duration ttl,
				Duration lease) {
			this.key = key;
			this.token = token;
			this.fingerprint = fingerprint;
			this.result = result;
			this.ttl = ttl;
			this.lease = lease;
		}

		synchronized void completeAfterCommit(ScheduledExecutorService scheduler) {
			this.afterCommit = true;
			long period = Math.max(1, this.lease.toMillis() / 3);
			this.renewal = scheduler.scheduleWithFixedDelay(this::renewLease, period, period, TimeUnit.MILLISECONDS);
		}

		/**
		 * Keeps duplicates out while the caller's transaction stays open after the method
		 * returned: without it they would take the key over once the lease ran out, and
		 * run the method a second time.
		 */
		private synchronized void renewLease() {
			if (this.ended || this.completing) {
				return;
			}
			try {
				if (!renew(this.key, this.token, new Fingerprint(this.fingerprint), this.lease)) {
					logger.warn("Key '" + this.key + "' was taken over while the transaction that ran its method was "
							+ "still open: a duplicate may run it again. Keep such transactions shorter");
					this.renewal.cancel(false);
				}
			}
			catch (RuntimeException ex) {
				logger.warn("Could not renew the lease of key '" + this.key
						+ "' while its transaction is open; retrying: " + ex);
			}
		}

		void transactionEnded(boolean committed) {
			if (committed && this.afterCommit) {
				storeAfterCommit();
				return;
			}
			synchronized (this) {
				// Waits for a renewal in flight: one that ran after the release below
				// would write the record anew.
				this.ended = true;
				if (this.renewal != null) {
					this.renewal.cancel(false);
				}
			}
			if (committed) {
				return;
			}
			// In a new transaction, as Spring requires of work after completion; a retry
			// then runs the method again at once instead of waiting for the lease. Sent
			// again while its outcome is unknown: fenced by the token, a release that did
			// land finds nothing (or the tombstone a released takeover leaves) and counts
			// as
			// done.
			RuntimeException failure = confirm(() -> {
				release(this.key, this.token);
				return true;
			}, () -> false);
			if (failure != null) {
				logger.error("Could not release key '" + this.key + "' after its transaction rolled back (the "
						+ "database stayed unreachable for " + this.lease + "); retries are refused until its "
						+ "lease expires", failure);
			}
		}

		/**
		 * Writes the result of a transaction that committed, sending the completion again
		 * while its outcome is unknown (a connection cut on its way): fenced by the
		 * token, a completion that did land finds its own result and answers
		 * {@code true}. The lease is renewed between the attempts, never during one: a
		 * renewal that met the completed row would report a take-over.
		 */
		private void storeAfterCommit() {
			RuntimeException failure = confirm(() -> {
				synchronized (this) {
					// Waits for a renewal in flight; later ones skip while this is set.
					this.completing = true;
				}
				boolean completed;
				try {
					completed = inOwnTransaction(() -> doComplete(this.key.value(), this.token, this.fingerprint,
							this.result.bytes(), millis(this.ttl)));
				}
				finally {
					synchronized (this) {
						this.completing = false;
					}
				}
				synchronized (this) {
					this.ended = true;
					this.renewal.cancel(false);
				}
				if (!completed) {
					logger.warn("Key '" + this.key + "' was taken over before its transaction committed: "
							+ "a duplicate may have run it again. Keep such transactions shorter than the lease");
				}
				return true;
			}, () -> {
				synchronized (this) {
					this.ended = true;
					this.renewal.cancel(false);
				}
				return false;
			});
			if (failure != null) {
				logger.error("Could not store the result of key '" + this.key + "' after its transaction "
						+ "committed (the database stayed unreachable for " + this.lease + "); the key stays in "
						+ "progress until its lease expires, then a retry runs the method again", failure);
			}
		}

		/**
		 * Runs {@code step} until it returns, asking again after a failure to reach the
		 * database for up to one lease, with a back-off from 10 ms to 1 s.
		 * @return the failure it gave up on, after running {@code giveUp}, or
		 * {@code null}
		 */
		private RuntimeException confirm(Supplier<Boolean> step, Supplier<Boolean> giveUp) {
			long deadline = System.nanoTime() + this.lease.toNanos();
			long delay = 10;
			while (true) {
				try {
					step.get();
					return null;
				}
				catch (RuntimeException ex) {
					if (!isUnreachable(ex) || System.nanoTime() - deadline >= 0 || !sleep(delay)) {
						giveUp.get();
						return ex;
					}
					logger.warn("Could not confirm a write of key '" + this.key + "' after its transaction ended; "
							+ "sending it again (fenced by the owner token, so repeating it is safe): " + ex);
					delay = Math.min(delay * 2, 1000);
				}
			}
		}

	}

	/**
	 * Whether {@code ex} means the database could not be reached, so that the outcome of
	 * the statement is unknown, as opposed to a failure of the statement itself.
	 */
	private static boolean isUnreachable(RuntimeException ex) {
		return ex instanceof DataAccessResourceFailureException || ex instanceof TransientDataAccessException
				|| ex instanceof RecoverableDataAccessException || ex instanceof CannotCreateTransactionException;
	}

	private static boolean sleep(long millis) {
		try {
			Thread.sleep(millis);
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

}
