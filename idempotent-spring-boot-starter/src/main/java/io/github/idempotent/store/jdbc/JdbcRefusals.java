package io.github.idempotent.store.jdbc;

import java.sql.SQLException;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.CannotAcquireLockException;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.PessimisticLockingFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.jdbc.support.SQLErrorCodeSQLExceptionTranslator;
import org.springframework.jdbc.support.SQLExceptionTranslator;

import io.github.idempotent.store.StoreFullException;

/**
 * What a failure of a {@link JdbcIdempotencyStore}'s own statement means, by Spring's
 * translation of the database's error code for this database
 * ({@link SQLErrorCodeSQLExceptionTranslator}, whatever translator the application's
 * {@code JdbcTemplate} has: Boot's translates by SQL state only, which leaves MariaDB's
 * lock-wait timeout and PostgreSQL's {@code lock_not_available} uncategorized), and by
 * the codes Spring puts with others or leaves out (a full disk, which Spring calls a
 * resource failure as it does a refused connection). A database that answered but refused
 * a statement has not become unreachable: the store turns contention into the answers of
 * the SPI and a full database into {@link StoreFullException}, and leaves the rest (a
 * connection that fails, a pool that times out) to the executor's reading of an outage.
 */
final class JdbcRefusals {

	/**
	 * PostgreSQL's class of insufficient resources (a full disk 53100, out of memory
	 * 53200, a configuration limit 53400), but for too many connections (53300): a
	 * connection refused, as a server that is down refuses it.
	 */
	private static final String POSTGRESQL_INSUFFICIENT_RESOURCES = "53";

	private static final String POSTGRESQL_TOO_MANY_CONNECTIONS = "53300";

	/**
	 * MySQL's and MariaDB's disk full (1021), out of memory (1037), out of resources
	 * (1041) and table full (1114).
	 */
	private static final Set<Integer> MYSQL_FULL = Set.of(1021, 1037, 1041, 1114);

	/**
	 * MariaDB's "Record has changed since last read" under
	 * {@code innodb_snapshot_isolation}: a serialization failure that rolled the
	 * statement back, under another code.
	 */
	private static final int MARIADB_RECORD_CHANGED = 1020;

	enum Refusal {

		/**
		 * A serialization failure or a deadlock: the database rolled the statement (or
		 * the store's transaction) back, and it can be sent again at once.
		 */
		CONFLICT,

		/**
		 * A lock wait or a statement that timed out: another transaction holds the row (a
		 * completion in its caller's transaction that has not committed yet).
		 */
		TIMEOUT,

		/**
		 * No room for what the statement writes.
		 */
		FULL

	}

	private final JdbcDialect dialect;

	private final SQLExceptionTranslator translator;

	JdbcRefusals(JdbcDialect dialect) {
		this.dialect = dialect;
		this.translator = new SQLErrorCodeSQLExceptionTranslator(switch (dialect) {
			case H2 -> "H2";
			case POSTGRESQL -> "PostgreSQL";
			case MYSQL -> "MySQL";
		});
	}

	/**
	 * What {@code failure} refused, or {@code null} for any other failure.
	 */
	@Nullable Refusal of(Throwable failure) {
		SQLException sql = sqlException(failure);
		if (sql == null) {
			return null;
		}
		if (isFull(sql)) {
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

	/**
	 * Whether {@code failure} is contention: a conflict or a timeout.
	 */
	boolean isContention(Throwable failure) {
		Refusal refusal = of(failure);
		return refusal == Refusal.CONFLICT || refusal == Refusal.TIMEOUT;
	}

	/**
	 * A {@link Refusal#FULL full} refusal as the SPI says it.
	 */
	static StoreFullException full(RuntimeException failure) {
		SQLException sql = sqlException(failure);
		StoreFullException full = new StoreFullException("The database of the JDBC idempotency store has no room "
				+ "for a record"
				+ ((sql != null) ? " (SQL state " + sql.getSQLState() + ", error " + sql.getErrorCode() + ")" : ""));
		full.initCause(failure);
		return full;
	}

	private boolean isFull(SQLException sql) {
		String state = sql.getSQLState();
		return switch (this.dialect) {
			case POSTGRESQL -> state != null && state.startsWith(POSTGRESQL_INSUFFICIENT_RESOURCES)
					&& !state.equals(POSTGRESQL_TOO_MANY_CONNECTIONS);
			case MYSQL -> MYSQL_FULL.contains(sql.getErrorCode());
			case H2 -> false;
		};
	}

	private static @Nullable SQLException sqlException(Throwable failure) {
		for (Throwable ex = failure; ex != null && ex.getCause() != ex; ex = ex.getCause()) {
			if (ex instanceof SQLException sql) {
				return sql;
			}
		}
		return null;
	}

}
