package io.github.idempotent.store.jdbc;

import org.jspecify.annotations.Nullable;

/**
 * Every SQL statement of a {@link JdbcIdempotencyStore}, written once for all databases
 * and rendered for one table in the {@link JdbcDialect} of its database (which supplies
 * the fragments that differ, and the purge).
 */
final class JdbcStatements {

	// A duplicate is a row count of 0, not an error, except on H2 (see JdbcDialect).
	private static final String INSERT = """
			%CLAIM_INSERT% INTO %TABLE_NAME% (idempotency_key, state, owner_token, fingerprint, expires_at)
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

	// A completion whose reply was lost landed: the row is still its owner's.
	private static final String COMPLETED_BY = """
			SELECT COUNT(*) FROM %TABLE_NAME% WHERE idempotency_key = ? AND owner_token = ? AND state = 'C'""";

	// Whether a record is left after an operator's delete: a tombstone is none.
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

	/**
	 * See {@link JdbcDialect#claimSql}.
	 */
	final @Nullable String claim;

	/**
	 * See {@link JdbcDialect#purgeSql}.
	 */
	final String purge;

	/**
	 * See {@link JdbcDialect#purgeLockSql}.
	 */
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
