package io.github.idempotent.store.jdbc;

import java.sql.Connection;
import java.sql.Savepoint;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.RecoverableDataAccessException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.transaction.CannotCreateTransactionException;
import org.springframework.transaction.ConfigurableTransactionManager;
import org.springframework.transaction.NoTransactionException;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.interceptor.TransactionAspectSupport;
import org.springframework.transaction.support.ResourceHolderSupport;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;

/**
 * Completions with {@link JdbcIdempotencyStore#setJoinTransaction(boolean)
 * joinTransaction}: written in the caller's transaction when it can see and update the
 * placeholder's latest version, else right after the commit. Settled when the transaction
 * on the store's {@link DataSource} ends, not another manager's inside it
 * ({@link JdbcIdempotencyStore#listenTo}): a release would wait for the row lock of the
 * very transaction the thread is in.
 */
final class TransactionBoundCompletions implements TransactionExecutionListener {

	private static final Log logger = LogFactory.getLog(JdbcIdempotencyStore.class);

	// The lease of a claim not made in the transaction is unknown.
	private static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);

	private final JdbcIdempotencyStore store;

	private final DataSource dataSource;

	private final Object transactionStatesKey = new Object();

	private final List<ConfigurableTransactionManager> listenedTo = new CopyOnWriteArrayList<>();

	/** The store's connection bound before a transaction began on this thread. */
	private final ThreadLocal<Object> boundBeforeBegin = new ThreadLocal<>();

	/** The store's own transactions, which never hold a completion. */
	static final String OWN_TRANSACTION_NAME = JdbcIdempotencyStore.class.getName();

	// No thread until a completion waits for the commit.
	private final ScheduledThreadPoolExecutor renewals = OwnTransaction.daemon("idempotent-jdbc-commit-wait");

	private volatile Boolean innodbSnapshotIsolation;

	TransactionBoundCompletions(JdbcIdempotencyStore store, DataSource dataSource) {
		this.store = store;
		this.dataSource = dataSource;
	}

	void listenTo(ConfigurableTransactionManager manager) {
		if (!manager.getTransactionExecutionListeners().contains(this)) {
			manager.addListener(this);
			this.listenedTo.add(manager);
		}
	}

	@Override
	public void beforeBegin(TransactionExecution transaction) {
		if (this.store.isJoinTransaction()) {
			this.boundBeforeBegin.set(boundConnection());
		}
	}

	// A transaction that bound a new connection of the store's DataSource: its state is
	// registered in its synchronizations now, while they are current.
	@Override
	public void afterBegin(TransactionExecution transaction, @Nullable Throwable beginFailure) {
		Object before = this.boundBeforeBegin.get();
		this.boundBeforeBegin.remove();
		if (this.store.isJoinTransaction() && beginFailure == null
				&& !OWN_TRANSACTION_NAME.equals(transaction.getTransactionName()) && isTransactionActive()
				&& boundConnection() != before) {
			currentTransactionState();
		}
	}

	private Object boundConnection() {
		return TransactionSynchronizationManager.getResource(this.dataSource);
	}

	boolean isTransactionActive() {
		return TransactionSynchronizationManager.isActualTransactionActive()
				&& TransactionSynchronizationManager.isSynchronizationActive()
				&& TransactionSynchronizationManager.hasResource(this.dataSource);
	}

	// A key a transaction on this thread completed, not yet committed: that transaction
	// replays it, another (REQUIRES_NEW) is told it is in progress; null for other keys.
	// Not asked of the database: the transaction this thread waits in may lock the row.
	ClaimResult claimCompletedOnThisThread(String key, Duration lease) {
		Map<Object, TransactionState> states = states();
		Object current = boundConnection();
		for (TransactionState state : (states != null) ? states.values() : List.<TransactionState>of()) {
			PendingCompletion pending = state.completions.get(key);
			if (pending != null) {
				return (state.transaction == current) ? new ClaimResult.Completed(pending.fingerprint, pending.result)
						: new ClaimResult.InProgress(pending.fingerprint, lease);
			}
		}
		return null;
	}

	/** For a completion that waits for the commit: it renews the lease until then. */
	void claimed(String token, Duration lease) {
		currentTransactionState().leases.put(token, lease);
	}

	boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result, Duration ttl) {
		TransactionState state = currentTransactionState();
		Duration lease = state.leases.getOrDefault(token, DEFAULT_LEASE);
		PendingCompletion pending = new PendingCompletion(key, token, fingerprint, result, ttl, lease);
		state.completions.put(key.value(), pending);
		try {
			if (completeInCallersTransaction(state, key.value(), token, result.bytes(),
					JdbcIdempotencyStore.millis(ttl))) {
				return true;
			}
		}
		catch (DataAccessException ex) {
			// The database aborted the caller's transaction (or may have): rolled back,
			// it releases the key and the retry runs the method again.
			markRollbackOnly(state);
			logger.warn("Could not complete key '" + key + "' in its transaction, which is now rollback-only "
					+ "(its commit will fail and release the key): " + ex);
			return true;
		}
		// The caller's transaction cannot see or update the placeholder: complete after
		// the commit. Renewing now tells a takeover (false) from a row it cannot see.
		boolean owned = true;
		try {
			owned = this.store.renew(key, token, fingerprint, lease);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not renew the lease of key '" + key + "' while its transaction is open; "
					+ "its result is stored after the commit: " + ex);
		}
		if (!owned) {
			state.completions.remove(key.value());
			return false;
		}
		pending.completeAfterCommit();
		return true;
	}

	// Completes in the caller's transaction when it can update the row's latest version
	// without undoing the caller's work: at READ COMMITTED; on InnoDB unless MariaDB's
	// innodb_snapshot_isolation is on; otherwise only if its snapshot sees the latest
	// committed row, behind a savepoint (left for the commit to release). False if the
	// completion has to wait for the commit; throws if the UPDATE failed unrecovered.
	private boolean completeInCallersTransaction(TransactionState state, String key, String token, byte[] result,
			long ttlMillis) {
		JdbcOperations jdbc = this.store.jdbc;
		int isolation = (state.isolation != null) ? state.isolation
				: jdbc.execute((ConnectionCallback<Integer>) Connection::getTransactionIsolation);
		boolean mysql = this.store.dialect == JdbcDialect.MYSQL;
		if (isolation <= TransactionDefinition.ISOLATION_READ_COMMITTED || (mysql && !innodbSnapshotIsolation())) {
			return jdbc.update(this.store.sql.complete, result, ttlMillis, key, token) == 1;
		}
		if ((mysql && isolation >= TransactionDefinition.ISOLATION_SERIALIZABLE) || !snapshotSeesLatest(key)) {
			return false;
		}
		Savepoint savepoint = jdbc.execute((ConnectionCallback<Savepoint>) Connection::setSavepoint);
		try {
			return jdbc.update(this.store.sql.complete, result, ttlMillis, key, token) == 1;
		}
		catch (DataAccessException ex) {
			try {
				jdbc.execute((ConnectionCallback<?>) (connection) -> {
					connection.rollback(savepoint);
					return null;
				});
			}
			catch (DataAccessException lost) {
				// The database rolled back the whole transaction, savepoint included.
				ex.addSuppressed(lost);
				throw ex;
			}
			logger.debug("Key '" + key + "' cannot be completed in its transaction (" + ex.getMessage()
					+ "); storing its result after the commit");
			return false;
		}
	}

	/** MariaDB's {@code innodb_snapshot_isolation} (on from 11.6.2); MySQL has none. */
	private boolean innodbSnapshotIsolation() {
		if (this.innodbSnapshotIsolation == null) {
			try {
				this.innodbSnapshotIsolation = Integer.valueOf(1)
					.equals(this.store.ownTransaction.run(
							() -> this.store.jdbc.queryForObject("SELECT @@innodb_snapshot_isolation", Integer.class)));
			}
			catch (DataAccessException ex) {
				this.innodbSnapshotIsolation = false;
			}
		}
		return this.innodbSnapshotIsolation;
	}

	private boolean snapshotSeesLatest(String key) {
		List<?> seen = this.store.jdbc.queryForList(this.store.sql.version, key);
		return !seen.isEmpty() && seen
			.equals(this.store.ownTransaction.run(() -> this.store.jdbc.queryForList(this.store.sql.version, key)));
	}

	private void markRollbackOnly(TransactionState state) {
		if (boundConnection() instanceof ResourceHolderSupport holder) {
			// Enough for DataSourceTransactionManager and JdbcTransactionManager.
			holder.setRollbackOnly();
		}
		// In another manager's transaction, its status is not the store's.
		if (TransactionSynchronizationManager.getSynchronizations().contains(state)) {
			try {
				TransactionAspectSupport.currentTransactionStatus().setRollbackOnly();
			}
			catch (NoTransactionException ex) {
				// Not a @Transactional method: the connection holder's flag has to do.
			}
		}
	}

	void close() {
		this.renewals.shutdownNow();
		this.listenedTo.forEach((manager) -> manager.getTransactionExecutionListeners().remove(this));
	}

	/** The transactions on this thread that claimed or completed keys of this store. */
	@SuppressWarnings("unchecked")
	private Map<Object, TransactionState> states() {
		return (Map<Object, TransactionState>) TransactionSynchronizationManager.getResource(this.transactionStatesKey);
	}

	private TransactionState currentTransactionState() {
		Map<Object, TransactionState> bound = states();
		Map<Object, TransactionState> states = (bound != null) ? bound : new IdentityHashMap<>();
		if (bound == null) {
			TransactionSynchronizationManager.bindResource(this.transactionStatesKey, states);
		}
		// Also across a REQUIRES_NEW transaction that suspends it. Created here rather
		// than as it began (a manager this store does not listen to), it is registered
		// in the synchronizations current now, another manager's perhaps.
		return states.computeIfAbsent(boundConnection(), (transaction) -> {
			TransactionState state = new TransactionState(transaction, states);
			TransactionSynchronizationManager.registerSynchronization(state);
			return state;
		});
	}

	// Releases the claim on a rollback, writes the result after a commit if it could not
	// be written in the transaction, and renews the lease meanwhile.
	private final class PendingCompletion {

		private final RecordKey key;

		private final String token;

		private final Fingerprint fingerprint;

		private final StoredResult result;

		private final Duration ttl;

		private final Duration lease;

		private ScheduledFuture<?> renewal;

		// Renewals skip: ended (one after a release would write the record anew), or
		// completing (one would meet the completed row and report a takeover).
		private boolean quiet;

		PendingCompletion(RecordKey key, String token, Fingerprint fingerprint, StoredResult result, Duration ttl,
				Duration lease) {
			this.key = key;
			this.token = token;
			this.fingerprint = fingerprint;
			this.result = result;
			this.ttl = ttl;
			this.lease = lease;
		}

		synchronized void completeAfterCommit() {
			long period = Math.max(1, this.lease.toMillis() / 3);
			this.renewal = TransactionBoundCompletions.this.renewals.scheduleWithFixedDelay(this::renewLease, period,
					period, TimeUnit.MILLISECONDS);
		}

		/** Keeps duplicates out while the caller's transaction stays open. */
		private synchronized void renewLease() {
			try {
				if (!this.quiet && !TransactionBoundCompletions.this.store.renew(this.key, this.token, this.fingerprint,
						this.lease)) {
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

		// In new transactions, as Spring requires after completion; each sent again while
		// its outcome is unknown (fenced by the token, one that landed counts as done);
		// the lease is renewed between attempts, never during one.
		void transactionEnded(boolean committed) {
			if (committed && this.renewal == null) {
				return;
			}
			RuntimeException failure = confirm(() -> {
				quiet(true);
				try {
					if (!committed) {
						TransactionBoundCompletions.this.store.release(this.key, this.token);
					}
					else if (!TransactionBoundCompletions.this.store.completeOnItsOwn(this.key, this.token,
							this.fingerprint, this.result, this.ttl)) {
						logger.warn("Key '" + this.key + "' was taken over before its transaction committed: "
								+ "a duplicate may have run it again. Keep such transactions shorter than the lease");
					}
				}
				finally {
					quiet(!committed);
				}
			});
			end();
			if (failure != null) {
				logger.error("Could not " + (committed ? "store the result of" : "release") + " key '" + this.key
						+ "' after its transaction " + (committed ? "committed" : "rolled back")
						+ " (the database stayed unreachable for " + this.lease + "); "
						+ (committed
								? "the key stays in progress until its lease expires, then a retry runs the method again"
								: "retries are refused until its lease expires"),
						failure);
			}
		}

		private synchronized void quiet(boolean quiet) {
			this.quiet = quiet;
		}

		private synchronized void end() {
			this.quiet = true;
			if (this.renewal != null) {
				this.renewal.cancel(false);
			}
		}

		// Retries step after a failure to reach the database, for up to one lease;
		// returns the failure it gave up on, or null.
		private RuntimeException confirm(Runnable step) {
			long deadline = System.nanoTime() + this.lease.toNanos();
			for (long delay = 10;; delay = Math.min(delay * 2, 1000)) {
				try {
					step.run();
					return null;
				}
				catch (RuntimeException ex) {
					if (!(ex instanceof DataAccessResourceFailureException || ex instanceof TransientDataAccessException
							|| ex instanceof RecoverableDataAccessException
							|| ex instanceof CannotCreateTransactionException) || System.nanoTime() - deadline >= 0
							|| !OwnTransaction.pause(delay)) {
						return ex;
					}
					logger.warn("Could not confirm a write of key '" + this.key + "' after its transaction ended; "
							+ "sending it again (fenced by the owner token, so repeating it is safe): " + ex);
				}
			}
		}

	}

	// Leases and completions of one transaction, bound to the thread so that a
	// REQUIRES_NEW transaction inside it still sees the keys it holds.
	private final class TransactionState implements TransactionSynchronization {

		private final Object transaction;

		/** As declared when it began; {@code null} for the connection's. */
		private final Integer isolation = TransactionSynchronizationManager.getCurrentTransactionIsolationLevel();

		// The thread's map, held: a JTA transaction manager may end the transaction on
		// another thread (a timeout), where it is not bound.
		private final Map<Object, TransactionState> states;

		private final Map<String, Duration> leases = new LinkedHashMap<>();

		private final Map<String, PendingCompletion> completions = new LinkedHashMap<>();

		/** The keys completed before each savepoint (of a NESTED transaction). */
		private final Map<Object, Set<String>> savepoints = new IdentityHashMap<>();

		/** Completions a rollback to a savepoint undid: released when it ends. */
		private final List<PendingCompletion> undone = new ArrayList<>();

		TransactionState(Object transaction, Map<Object, TransactionState> states) {
			this.transaction = transaction;
			this.states = states;
		}

		@Override
		public void savepoint(Object savepoint) {
			this.savepoints.put(savepoint, new HashSet<>(this.completions.keySet()));
		}

		// Completions since the savepoint are undone: their keys are released when the
		// transaction ends (on InnoDB it still holds their rows' locks).
		@Override
		public void savepointRollback(Object savepoint) {
			// Unknown: this state was created after the savepoint.
			Set<String> before = this.savepoints.getOrDefault(savepoint, Set.of());
			this.completions.entrySet()
				.removeIf((entry) -> !before.contains(entry.getKey()) && this.undone.add(entry.getValue()));
		}

		@Override
		public void afterCompletion(int status) {
			this.states.remove(this.transaction);
			if (this.states.isEmpty()) {
				TransactionSynchronizationManager
					.unbindResourceIfPossible(TransactionBoundCompletions.this.transactionStatesKey);
			}
			this.completions.values().forEach((pending) -> pending.transactionEnded(status == STATUS_COMMITTED));
			this.undone.forEach((pending) -> pending.transactionEnded(false));
		}

	}

}
