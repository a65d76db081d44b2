package io.github.idempotent.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Set;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.function.Predicate;
import java.util.function.Supplier;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.CannotAcquireLockException;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.PessimisticLockingFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.jdbc.support.SQLErrorCodeSQLExceptionTranslator;
import org.springframework.jdbc.support.SQLExceptionTranslator;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.github.idempotent.store.StoreFullException;

/**
 * Runs the work of a {@link JdbcIdempotencyStore} that must commit on its own (claims,
 * releases, renewals, purges), even inside a caller's transaction on the same
 * {@link DataSource}; sent again after a serialization failure or deadlock. A refusal is
 * read from the database's error code ({@link SQLErrorCodeSQLExceptionTranslator}: Boot's
 * translation by SQL state leaves MariaDB's lock-wait timeout and PostgreSQL's
 * {@code lock_not_available} uncategorized): contention and a full database are no
 * outage.
 */
final class OwnTransaction {

	private static final int MAX_ATTEMPTS = 5;

	/** Disk full, out of memory, out of resources, table full. */
	private static final Set<Integer> MYSQL_FULL = Set.of(1021, 1037, 1041, 1114);

	/** "Record has changed since last read" under {@code innodb_snapshot_isolation}. */
	private static final int MARIADB_RECORD_CHANGED = 1020;

	private final DataSource dataSource;

	private final JdbcDialect dialect;

	private final SQLExceptionTranslator translator;

	/** New READ COMMITTED transactions, also when the caller has none. */
	final TransactionTemplate template;

	OwnTransaction(DataSource dataSource, PlatformTransactionManager transactionManager, JdbcDialect dialect) {
		this.dataSource = dataSource;
		this.dialect = dialect;
		this.translator = new SQLErrorCodeSQLExceptionTranslator(
				(dialect == JdbcDialect.H2) ? "H2" : (dialect == JdbcDialect.POSTGRESQL) ? "PostgreSQL" : "MySQL");
		this.template = new TransactionTemplate(transactionManager);
		this.template.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		this.template.setName(TransactionBoundCompletions.OWN_TRANSACTION_NAME);
		// A claim may read the row twice; under REPEATABLE READ (MySQL's default) the
		// second read would not see the row another claimer just wrote.
		this.template.setIsolationLevel(TransactionDefinition.ISOLATION_READ_COMMITTED);
	}

	// As autocommit statements outside a transaction on a connection that autocommits,
	// else in a new transaction: a pool set to auto-commit false would roll them back
	// when the connection goes back, and the pools behind a routing data source may
	// differ. Throws StoreFullException if the database had no room for a write.
	<T> T run(Supplier<T> action) {
		for (int attempt = 1;; attempt++) {
			try {
				return runOnce(action);
			}
			catch (RuntimeException ex) {
				Refusal refusal = refusalOf(ex);
				if (refusal == Refusal.FULL) {
					SQLException sql = sqlException(ex, (any) -> true);
					StoreFullException full = new StoreFullException(
							"The database of the JDBC idempotency store has no room for a record (SQL state "
									+ sql.getSQLState() + ", error " + sql.getErrorCode() + ")");
					full.initCause(ex);
					throw full;
				}
				if (refusal != Refusal.CONFLICT || attempt == MAX_ATTEMPTS) {
					throw ex;
				}
			}
		}
	}

	private <T> T runOnce(Supplier<T> action) {
		if (!TransactionSynchronizationManager.hasResource(this.dataSource)) {
			Connection connection = null;
			try {
				connection = this.dataSource.getConnection();
				if (connection.getAutoCommit()) {
					// The statements run on the very connection whose mode was read.
					TransactionSynchronizationManager.bindResource(this.dataSource, new ConnectionHolder(connection));
					try {
						return action.get();
					}
					finally {
						TransactionSynchronizationManager.unbindResource(this.dataSource);
					}
				}
			}
			catch (SQLException ex) {
				throw new CannotGetJdbcConnectionException("Failed to obtain an autocommit JDBC Connection", ex);
			}
			finally {
				DataSourceUtils.releaseConnection(connection, this.dataSource);
			}
		}
		try {
			return this.template.execute((status) -> action.get());
		}
		catch (TransactionSystemException ex) {
			// A broken connection leaves a transaction that cannot be rolled back either:
			// the statement's failure says what happened.
			if (ex.getApplicationException() instanceof RuntimeException failure) {
				failure.addSuppressed(ex);
				throw failure;
			}
			throw ex;
		}
	}

	/** One daemon thread, started by the first task. */
	static ScheduledThreadPoolExecutor daemon(String name) {
		ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, (task) -> {
			Thread thread = new Thread(task, name);
			thread.setDaemon(true);
			return thread;
		});
		executor.setRemoveOnCancelPolicy(true);
		return executor;
	}

	/** Sleeps; {@code false} if interrupted, the thread's flag set again. */
	static boolean pause(long millis) {
		try {
			Thread.sleep(millis);
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	// CONFLICT (serialization failure or deadlock: send again at once), TIMEOUT (another
	// transaction holds the row), FULL (no room), or null for any other failure.
	private enum Refusal {

		CONFLICT, TIMEOUT, FULL

	}

	private @Nullable Refusal refusalOf(Throwable failure) {
		SQLException sql = sqlException(failure, (any) -> true);
		if (sql == null) {
			return null;
		}
		String state = String.valueOf(sql.getSQLState());
		boolean full = switch (this.dialect) {
			// Insufficient resources, but for too many connections: a refused connection.
			case POSTGRESQL -> state.startsWith("53") && !state.equals("53300");
			case MYSQL -> MYSQL_FULL.contains(sql.getErrorCode());
			case H2 -> false;
		};
		if (full) {
			return Refusal.FULL;
		}
		if (this.dialect == JdbcDialect.MYSQL && sql.getErrorCode() == MARIADB_RECORD_CHANGED) {
			return Refusal.CONFLICT;
		}
		DataAccessException meaning = this.translator.translate("idempotency store", null, sql);
		if (meaning instanceof CannotAcquireLockException || meaning instanceof QueryTimeoutException) {
			return Refusal.TIMEOUT;
		}
		return (meaning instanceof PessimisticLockingFailureException) ? Refusal.CONFLICT : null;
	}

	boolean isContention(Throwable failure) {
		Refusal refusal = refusalOf(failure);
		return refusal == Refusal.CONFLICT || refusal == Refusal.TIMEOUT;
	}

	static @Nullable SQLException sqlException(Throwable failure, Predicate<SQLException> matching) {
		for (Throwable ex = failure; ex != null && ex.getCause() != ex; ex = ex.getCause()) {
			if (ex instanceof SQLException sql && matching.test(sql)) {
				return sql;
			}
		}
		return null;
	}

}
