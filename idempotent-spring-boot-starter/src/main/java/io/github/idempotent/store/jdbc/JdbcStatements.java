package io.github.idempotent.store.jdbc;

import org.jspecify.annotations.Nullable;

/**
 * Every SQL statement of a {@link JdbcIdempotencyStore}, rendered for one table in the
 * {@link JdbcDialect} of its database.
 */
final class JdbcStatements {

	// A duplicate is a row count of 0, not an error, except on H2 (see JdbcDialect).
	private static final String INSERT = """
			%CLAIM_INSERT% INTO %TABLE_NAME% (idempotency_key, state, owner_token, fingerprint, expires_at)
			VALUES (?, 'P', ?, ?, %NOW_PLUS_MILLIS%)%INSERT_SUFFIX%""";

	// Expired by the take-over's own comparison, not the milliseconds left: a row with
	// under 1 ms left would read as 0 yet not be taken over, and the claim would loop.
	private static final String SELECT = """
			SELECT state, owner_token, fingerprint, result, %MILLIS_LEFT% AS millis_left,
			CASE WHEN expires_at <= %NOW% THEN 1 ELSE 0 END AS expired
			FROM %TABLE_NAME% WHERE idempotency_key = ?""";

	// A tombstone (state D) is taken over like an expired row, whatever its expiry.
	private static final String TAKE_OVER = """
			UPDATE %TABLE_NAME% SET state = 'P', owner_token = ?, fingerprint = ?, result = NULL,
			expires_at = %NOW_PLUS_MILLIS%
			WHERE idempotency_key = ? AND owner_token = ? AND (expires_at <= %NOW% OR state = 'D')""";

	// Only a take-over writes another token, so a token that still holds, even past the
	// lease, proves nobody else ran.
	private static final String COMPLETE = """
			UPDATE %TABLE_NAME% SET state = 'C', result = ?, expires_at = %NOW_PLUS_MILLIS%
			WHERE idempotency_key = ? AND owner_token = ? AND state = 'P'""";

	// A concurrent claim makes this INSERT lose like any other.
	private static final String INSERT_COMPLETED = """
			INSERT INTO %TABLE_NAME% (idempotency_key, state, owner_token, fingerprint, result, expires_at)
			VALUES (?, 'C', ?, ?, ?, %NOW_PLUS_MILLIS%)%INSERT_SUFFIX%""";

	private static final String RELEASE = """
			DELETE FROM %TABLE_NAME%
			WHERE idempotency_key = ? AND owner_token = ? AND state = 'P'""";

	// A released takeover becomes a tombstone rather than going, so that the next claim
	// still knows it takes over a call that never finished.
	private static final String RELEASE_TAKEOVER = """
			UPDATE %TABLE_NAME% SET state = 'D'
			WHERE idempotency_key = ? AND owner_token = ? AND state = 'P'""";

	private static final String RENEW = """
			UPDATE %TABLE_NAME% SET expires_at = %NOW_PLUS_MILLIS%
			WHERE idempotency_key = ? AND owner_token = ? AND state = 'P'""";

	private static final String VERSION = """
			SELECT state, owner_token, expires_at FROM %TABLE_NAME% WHERE idempotency_key = ?""";

	// The state is a literal so that PostgreSQL can match the partial index's predicate.
	private static final String IN_PROGRESS = """
			SELECT idempotency_key, owner_token, fingerprint, %MILLIS_LEFT% AS millis_left
			FROM %TABLE_NAME% WHERE state = 'P' AND idempotency_key > ? AND expires_at > %NOW%
			ORDER BY idempotency_key LIMIT ?""";

	private static final String DELETE = """
			DELETE FROM %TABLE_NAME% WHERE idempotency_key = ?""";

	// A tombstone is left to the purge, lest its owner write its record anew.
	private static final String DELETE_UNLESS_HELD = """
			DELETE FROM %TABLE_NAME% WHERE idempotency_key = ?
			AND (state = 'C' OR (state = 'P' AND expires_at <= %NOW%))""";

	// The row becomes a tombstone with the owner's token: the owner's renewal cannot
	// write it anew, and complete, release and renew match state P only.
	private static final String DELETE_IN_PROGRESS = """
			UPDATE %TABLE_NAME% SET state = 'D'
			WHERE idempotency_key = ? AND state = 'P'""";

	private static final String EXISTS = """
			SELECT COUNT(*) FROM %TABLE_NAME% WHERE idempotency_key = ?""";

	// A completion whose reply was lost landed: the row is still its owner's.
	private static final String COMPLETED_BY = """
			SELECT COUNT(*) FROM %TABLE_NAME% WHERE idempotency_key = ? AND owner_token = ? AND state = 'C'""";

	private static final String RECORD_EXISTS = """
			SELECT COUNT(*) FROM %TABLE_NAME% WHERE idempotency_key = ? AND state <> 'D'""";

	final String insert;

	final String select;

	final String takeOver;

	final String complete;

	final String insertCompleted;

	final String release;

	final String releaseTakeover;

	final String renew;

	final String version;

	final String inProgress;

	final String delete;

	final String deleteUnlessHeld;

	final String deleteInProgress;

	final String exists;

	final String completedBy;

	final String recordExists;

	/** See {@link JdbcDialect#claimSql}. */
	final @Nullable String claim;

	/** See {@link JdbcDialect#purgeSql}. */
	final String purge;

	/** See {@link JdbcDialect#purgeLockSql}. */
	final @Nullable String purgeLock;

	JdbcStatements(JdbcDialect dialect, String tableName) {
		this.insert = dialect.sql(INSERT, tableName);
		this.select = dialect.sql(SELECT, tableName);
		this.takeOver = dialect.sql(TAKE_OVER, tableName);
		this.complete = dialect.sql(COMPLETE, tableName);
		this.insertCompleted = dialect.sql(INSERT_COMPLETED, tableName);
		this.release = dialect.sql(RELEASE, tableName);
		this.releaseTakeover = dialect.sql(RELEASE_TAKEOVER, tableName);
		this.renew = dialect.sql(RENEW, tableName);
		this.version = dialect.sql(VERSION, tableName);
		this.inProgress = dialect.sql(IN_PROGRESS, tableName);
		this.delete = dialect.sql(DELETE, tableName);
		this.deleteUnlessHeld = dialect.sql(DELETE_UNLESS_HELD, tableName);
		this.deleteInProgress = dialect.sql(DELETE_IN_PROGRESS, tableName);
		this.exists = dialect.sql(EXISTS, tableName);
		this.completedBy = dialect.sql(COMPLETED_BY, tableName);
		this.recordExists = dialect.sql(RECORD_EXISTS, tableName);
		this.claim = dialect.claimSql(tableName);
		this.purge = dialect.purgeSql(tableName);
		this.purgeLock = dialect.purgeLockSql(tableName);
	}

}
