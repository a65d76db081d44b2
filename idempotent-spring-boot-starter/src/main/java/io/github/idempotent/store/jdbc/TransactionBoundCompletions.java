package io.github.idempotent.store.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.transaction.NoTransactionException;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.interceptor.TransactionAspectSupport;
import org.springframework.transaction.support.ResourceHolderSupport;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;

/**
 * Completions of a {@link JdbcIdempotencyStore} with
 * {@link JdbcIdempotencyStore#setJoinTransaction(boolean) joinTransaction}, inside a
 * transaction on the store's {@link DataSource}: tied to that transaction, so that the
 * stored result commits with the business rows, a rollback releases the key, and a second
 * call with the same key in the same transaction replays the result without waiting for
 * the row its own transaction has locked. The completion is written in the caller's
 * transaction when that transaction can see and update the placeholder's latest version,
 * else right after the commit ({@link PendingCompletion}).
 */
final class TransactionBoundCompletions {

	// The store's category: what is logged here is the store's doing.
	private static final Log logger = LogFactory.getLog(JdbcIdempotencyStore.class);

	// Lease of a completion that waits for its transaction to commit, when the claim
	// was not made in that transaction (so its lease is unknown): the default lease.
	private static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);

	private static final RowMapper<Version> VERSION_MAPPER = (rs, rowNum) -> new Version(rs.getString(1),
			rs.getString(2), rs.getObject(3));

	private final JdbcIdempotencyStore store;

	private final DataSource dataSource;

	private final JdbcOperations jdbc;

	private final JdbcDialect dialect;

	private final JdbcStatements sql;

	private final OwnTransaction ownTransaction;

	/**
	 * Key of the {@link TransactionState}s of these completions among the resources bound
	 * to a thread.
	 */
	private final Object transactionStatesKey = new Object();

	private ScheduledExecutorService renewals;

	private volatile Boolean innodbSnapshotIsolation;

	TransactionBoundCompletions(JdbcIdempotencyStore store, DataSource dataSource, JdbcOperations jdbc,
			JdbcDialect dialect, JdbcStatements sql, OwnTransaction ownTransaction) {
		this.store = store;
		this.dataSource = dataSource;
		this.jdbc = jdbc;
		this.dialect = dialect;
		this.sql = sql;
		this.ownTransaction = ownTransaction;
	}

	/**
	 * Whether this thread is in a transaction on the store's data source that a
	 * completion can be tied to.
	 */
	boolean isTransactionActive() {
		return TransactionSynchronizationManager.isActualTransactionActive()
				&& TransactionSynchronizationManager.isSynchronizationActive()
				&& TransactionSynchronizationManager.hasResource(this.dataSource);
	}

	/**
	 * The answer to a claim of a key that a transaction on this thread has completed and
	 * not yet committed: the same transaction replays its own result; another one (a
	 * REQUIRES_NEW inside it) is told the key is in progress, as it is to everyone else
	 * until the commit. Never the database's answer: its row may be locked by the very
	 * transaction this thread is waiting in.
	 * @return the answer, or {@code null} when no transaction on this thread completed
	 * the key
	 */
	ClaimResult claimCompletedOnThisThread(String key, Duration lease) {
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
				Fingerprint stored = pending.fingerprint();
				return (state.transaction == current) ? new ClaimResult.Completed(stored, pending.result())
						: new ClaimResult.InProgress(stored, lease);
			}
		}
		return null;
	}

	/**
	 * Remembers the lease of a claim made in the current transaction, for a completion
	 * that has to wait for the commit: it renews the lease until then.
	 */
	void claimed(String token, Duration lease) {
		currentTransactionState().leases.put(token, lease);
	}

	boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result, Duration ttl) {
		TransactionState state = currentTransactionState();
		Duration lease = state.leases.getOrDefault(token, DEFAULT_LEASE);
		PendingCompletion pending = new PendingCompletion(this.store, key, token, fingerprint, result, ttl, lease);
		// From here on a rollback releases the key, and a claim of the same key on this
		// thread is answered without the database.
		state.completions.put(key.value(), pending);
		try {
			if (completeInCallersTransaction(key.value(), token, result.bytes(), JdbcIdempotencyStore.millis(ttl))) {
				return true;
			}
		}
		catch (DataAccessException ex) {
			// The database has aborted or rolled back the caller's transaction (or may
			// have: no savepoint to return to). It must not commit what is left of it,
			// or later statements, as if the method's writes were in it: rolled back, it
			// releases the key and the retry runs the method again.
			markRollbackOnly();
			logger.warn("Could not complete key '" + key + "' in its transaction, which is now rollback-only "
					+ "(its commit will fail and release the key): " + ex);
			return true;
		}
		// The caller's transaction cannot see the placeholder's row, or cannot update it
		// without a
		// serialization failure: complete after the commit instead. Renewing now also
		// tells a take-over (false) from a row this transaction cannot see, and writes
		// anew a row that vanished, so that nobody else claims it meanwhile.
		boolean owned;
		try {
			owned = this.store.renew(key, token, fingerprint, lease);
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
	 * Completes in the caller's transaction, as one UPDATE of the placeholder's row, when
	 * that transaction can update the row's latest version without a failure that would
	 * undo the caller's own work:
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
			try (PreparedStatement update = connection.prepareStatement(this.sql.complete)) {
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
				Integer value = this.ownTransaction
					.run(() -> this.jdbc.queryForObject("SELECT @@innodb_snapshot_isolation", Integer.class));
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
	 * Whether the caller's transaction sees the placeholder's row as last committed: the
	 * row read with the transaction's snapshot (a plain, non-locking read) against the
	 * row read on a connection of its own.
	 */
	private boolean snapshotSeesLatest(String key) {
		List<Version> seen = this.jdbc.query(this.sql.version, VERSION_MAPPER, key);
		if (seen.isEmpty()) {
			return false;
		}
		List<Version> latest = this.ownTransaction.run(() -> this.jdbc.query(this.sql.version, VERSION_MAPPER, key));
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

	/**
	 * Stops renewing the leases of completions that wait for their transaction to commit.
	 */
	void close() {
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

	private record Version(String state, String token, Object expiresAt) {
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
					.unbindResourceIfPossible(TransactionBoundCompletions.this.transactionStatesKey);
			}
			for (PendingCompletion pending : this.completions.values()) {
				pending.transactionEnded(status == STATUS_COMMITTED);
			}
		}

	}

}
