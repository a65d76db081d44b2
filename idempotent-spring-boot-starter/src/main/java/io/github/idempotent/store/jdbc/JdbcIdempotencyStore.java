package io.github.idempotent.store.jdbc;

import java.sql.DatabaseMetaData;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.support.JdbcUtils;
import org.springframework.jdbc.support.MetaDataAccessException;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.Assert;

import io.github.idempotent.core.Fingerprint;
import io.github.idempotent.core.IdempotencyKey;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.OwnerToken;
import io.github.idempotent.store.StoredResult;

/**
 * {@link IdempotencyStore} on a relational table (see the {@code schema-*.sql} scripts
 * next to this class): the primary key is the scoped key, so the database's unique
 * constraint decides which of many concurrent claims wins.
 * <p>
 * A claim is an INSERT; when the row exists and has expired (a lease not renewed, or a
 * result past its TTL) it is taken over by an UPDATE conditional on the owner token that
 * was read, never by delete-then-insert, so two claimers can never both win. Complete,
 * release and renew are UPDATE or DELETE statements conditional on the token, the
 * in-progress state and an unexpired lease. Every time is the database's clock.
 * <p>
 * Claims, releases and renewals always commit on their own, even when the caller runs in
 * a transaction on the same {@link DataSource}: a claim must be visible to concurrent
 * duplicates at once. With {@link #setJoinTransaction(boolean) joinTransaction}, a
 * completion inside such a transaction is written in it, so that the stored result
 * commits or rolls back with the business rows; a rollback releases the claim.
 */
public class JdbcIdempotencyStore implements IdempotencyStore {

	/**
	 * Longest key, matching the key column of the shipped schemas.
	 */
	public static final int MAX_KEY_LENGTH = 512;

	/**
	 * Default name of the table.
	 */
	public static final String DEFAULT_TABLE_NAME = "idempotency_record";

	private static final Pattern TABLE_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_$]*(\\.[A-Za-z_][A-Za-z0-9_$]*)?");

	private static final Log logger = LogFactory.getLog(JdbcIdempotencyStore.class);

	// Each failed attempt means another claimer changed the row in between (took it
	// over, released or purged it); the next attempt reads what that claimer left.
	private static final int MAX_CLAIM_ATTEMPTS = 10;

	private static final String INSERT = """
			INSERT INTO %TABLE_NAME% (idempotency_key, state, owner_token, fingerprint, expires_at)
			VALUES (?, 'P', ?, ?, %NOW_PLUS_MILLIS%)%INSERT_SUFFIX%""";

	private static final String SELECT = """
			SELECT state, owner_token, fingerprint, result, %MILLIS_LEFT% AS millis_left
			FROM %TABLE_NAME% WHERE idempotency_key = ?""";

	private static final String TAKE_OVER = """
			UPDATE %TABLE_NAME% SET state = 'P', owner_token = ?, fingerprint = ?, result = NULL,
			expires_at = %NOW_PLUS_MILLIS%
			WHERE idempotency_key = ? AND owner_token = ? AND expires_at <= %NOW%""";

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

	private static final String RENEW = """
			UPDATE %TABLE_NAME% SET expires_at = %NOW_PLUS_MILLIS%
			WHERE idempotency_key = ? AND owner_token = ? AND state = 'P'""";

	private static final String EXISTS = """
			SELECT COUNT(*) FROM %TABLE_NAME% WHERE idempotency_key = ?""";

	private final DataSource dataSource;

	private final JdbcTemplate jdbc;

	private final TransactionTemplate ownTransaction;

	private final JdbcDialect dialect;

	private final String tableName;

	private final String insertSql;

	private final String selectSql;

	private final String takeOverSql;

	private final String completeSql;

	private final String insertCompletedSql;

	private final String existsSql;

	private final String releaseSql;

	private final String renewSql;

	private final String purgeSql;

	private volatile boolean joinTransaction;

	/**
	 * Creates a store on {@code tableName}, with the dialect of the database behind
	 * {@code dataSource} (read from its metadata once, here).
	 */
	public JdbcIdempotencyStore(DataSource dataSource, String tableName) {
		this(dataSource, tableName, detectDialect(dataSource));
	}

	public JdbcIdempotencyStore(DataSource dataSource, String tableName, JdbcDialect dialect) {
		Assert.notNull(dataSource, "dataSource must not be null");
		Assert.notNull(dialect, "dialect must not be null");
		Assert.isTrue(tableName != null && TABLE_NAME.matcher(tableName).matches(),
				() -> "tableName '" + tableName + "' must be a plain SQL identifier, optionally schema-qualified");
		this.dataSource = dataSource;
		this.jdbc = new JdbcTemplate(dataSource);
		DataSourceTransactionManager transactionManager = new DataSourceTransactionManager(dataSource);
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
		this.releaseSql = dialect.sql(RELEASE, tableName);
		this.renewSql = dialect.sql(RENEW, tableName);
		this.purgeSql = dialect.purgeSql(tableName);
	}

	private static JdbcDialect detectDialect(DataSource dataSource) {
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
	public ClaimResult claim(IdempotencyKey key, Fingerprint fingerprint, Duration lease) {
		return inOwnTransaction(() -> doClaim(key.value(), fingerprint.value(), millis(lease)));
	}

	private ClaimResult doClaim(String key, String fingerprint, long leaseMillis) {
		String token = OwnerToken.generate();
		for (int attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt++) {
			if (insert(key, token, fingerprint, leaseMillis)) {
				return new ClaimResult.Acquired(token);
			}
			Row row = select(key);
			if (row == null) {
				continue; // released or purged since the insert: insert again
			}
			if (row.millisLeft() > 0) {
				Fingerprint stored = new Fingerprint(row.fingerprint());
				return row.completed() ? new ClaimResult.Completed(stored, new StoredResult(row.result()))
						: new ClaimResult.InProgress(stored, Duration.ofMillis(row.millisLeft()));
			}
			// Expired: conditional on the token read, so of all the claimers that saw
			// this row expired exactly one takes it over.
			if (this.jdbc.update(this.takeOverSql, token, fingerprint, leaseMillis, key, row.token()) == 1) {
				return new ClaimResult.Acquired(token);
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

	private Row select(String key) {
		List<Row> rows = this.jdbc.query(this.selectSql, (rs, rowNum) -> new Row("C".equals(rs.getString(1)),
				rs.getString(2), rs.getString(3), rs.getBytes(4), rs.getLong(5)), key);
		return rows.isEmpty() ? null : rows.get(0);
	}

	@Override
	public boolean complete(IdempotencyKey key, String token, Fingerprint fingerprint, StoredResult result,
			Duration ttl) {
		if (this.joinTransaction && TransactionSynchronizationManager.isActualTransactionActive()
				&& TransactionSynchronizationManager.hasResource(this.dataSource)) {
			// JdbcTemplate runs on the transaction's connection: the result commits or
			// rolls back with the business rows. Until then duplicates see the claim.
			boolean owned = doComplete(key.value(), token, fingerprint.value(), result.bytes(), millis(ttl));
			if (owned) {
				TransactionSynchronizationManager.registerSynchronization(new ReleaseOnRollback(key, token));
			}
			return owned;
		}
		return inOwnTransaction(() -> doComplete(key.value(), token, fingerprint.value(), result.bytes(), millis(ttl)));
	}

	private boolean doComplete(String key, String token, String fingerprint, byte[] result, long ttlMillis) {
		if (this.jdbc.update(this.completeSql, result, ttlMillis, key, token) == 1) {
			return true;
		}
		if (exists(key)) {
			return false;
		}
		try {
			return this.jdbc.update(this.insertCompletedSql, key, token, fingerprint, result, ttlMillis) == 1;
		}
		catch (DuplicateKeyException ex) {
			return false;
		}
	}

	@Override
	public boolean release(IdempotencyKey key, String token) {
		return inOwnTransaction(
				() -> this.jdbc.update(this.releaseSql, key.value(), token) == 1 || !exists(key.value()));
	}

	@Override
	public boolean renew(IdempotencyKey key, String token, Fingerprint fingerprint, Duration lease) {
		return inOwnTransaction(() -> {
			long leaseMillis = millis(lease);
			if (this.jdbc.update(this.renewSql, leaseMillis, key.value(), token) == 1) {
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
	 * Deletes expired records in batches of {@code batchSize} rows, each batch its own
	 * statement (and so its own short transaction), until a batch finds fewer rows. Safe
	 * to run on many instances at once: a row that is taken over meanwhile is no longer
	 * expired and stays.
	 * @return the number of rows deleted
	 */
	public int purgeExpired(int batchSize) {
		Assert.isTrue(batchSize > 0, "batchSize must be positive");
		int total = 0;
		while (true) {
			int deleted = inOwnTransaction(() -> this.jdbc.update(this.purgeSql, batchSize));
			total += deleted;
			if (deleted < batchSize) {
				return total;
			}
		}
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
		return this.ownTransaction.execute((status) -> action.get());
	}

	private static long millis(Duration duration) {
		return Math.max(1, duration.toMillis());
	}

	private record Row(boolean completed, String token, String fingerprint, byte[] result, long millisLeft) {

		@Override
		public byte[] result() {
			return (this.result != null) ? this.result : new byte[0];
		}

	}

	/**
	 * Releases a claim whose completion was rolled back with the caller's transaction, so
	 * that a retry can run the method again at once instead of waiting for the lease.
	 */
	private final class ReleaseOnRollback implements TransactionSynchronization {

		private final IdempotencyKey key;

		private final String token;

		ReleaseOnRollback(IdempotencyKey key, String token) {
			this.key = key;
			this.token = token;
		}

		@Override
		public void afterCompletion(int status) {
			if (status == STATUS_COMMITTED) {
				return;
			}
			try {
				// The transaction's connection may still be bound here: release() runs
				// in a new transaction, as Spring requires of work done after completion.
				release(this.key, this.token);
			}
			catch (RuntimeException ex) {
				logger.error("Could not release key '" + this.key + "' after its transaction rolled back; "
						+ "retries are refused until its lease expires", ex);
			}
		}

	}

}
