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
 * What a failure of a {@link JdbcIdempotencyStore}'s own statement means, by the
 * database's error code ({@link SQLErrorCodeSQLExceptionTranslator}: Boot's translation
 * by SQL state leaves MariaDB's lock-wait timeout and PostgreSQL's
 * {@code lock_not_available} uncategorized). A database that refused a statement has not
 * become unreachable: contention and a full database get answers of their own.
 */
final class JdbcRefusals {

	/**
	 * Insufficient resources, but for too many connections (53300): a refused connection.
	 */
	private static final String POSTGRESQL_INSUFFICIENT_RESOURCES = "53";

	private static final String POSTGRESQL_TOO_MANY_CONNECTIONS = "53300";

	/** Disk full, out of memory, out of resources, table full. */
	private static final Set<Integer> MYSQL_FULL = Set.of(1021, 1037, 1041, 1114);

	/** "Record has changed since last read" under {@code innodb_snapshot_isolation}. */
	private static final int MARIADB_RECORD_CHANGED = 1020;

	enum Refusal {

		/** A serialization failure or a deadlock: it can be sent again at once. */
		CONFLICT,

		/** A lock wait or statement timeout: another transaction holds the row. */
		TIMEOUT,

		/** No room for what the statement writes. */
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

	/** {@code null} for any other failure. */
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

	boolean isContention(Throwable failure) {
		Refusal refusal = of(failure);
		return refusal == Refusal.CONFLICT || refusal == Refusal.TIMEOUT;
	}

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
