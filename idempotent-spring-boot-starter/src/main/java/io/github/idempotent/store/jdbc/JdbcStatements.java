package io.github.idempotent.store.jdbc;

import java.util.function.UnaryOperator;

import org.jspecify.annotations.Nullable;

/**
 * Every SQL statement of a {@link JdbcIdempotencyStore}, rendered for one table in the
 * {@link JdbcDialect} of its database.
 */
final class JdbcStatements {

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

	final @Nullable String claim;

	final String purge;

	final @Nullable String purgeLock;

	JdbcStatements(JdbcDialect dialect, String tableName) {
		UnaryOperator<String> sql = (template) -> dialect.sql(template, tableName);
		// A duplicate is a row count of 0, not an error, except on H2 (see JdbcDialect).
		this.insert = sql.apply("""
				%CLAIM_INSERT% INTO %TABLE_NAME% (idempotency_key, state, owner_token, fingerprint, expires_at)
				VALUES (?, 'P', ?, ?, %NOW_PLUS_MILLIS%)%INSERT_SUFFIX%""");
		// Expired by the take-over's own comparison, not the milliseconds left: a row
		// with under 1 ms left reads as 0 yet is not taken over; the claim would loop.
		this.select = sql.apply("""
				SELECT state, owner_token, fingerprint, result, %MILLIS_LEFT% AS millis_left,
				CASE WHEN expires_at <= %NOW% THEN 1 ELSE 0 END AS expired
				FROM %TABLE_NAME% WHERE idempotency_key = ?""");
		// A tombstone (state D) is taken over like an expired row, whatever its expiry.
		this.takeOver = sql.apply("""
				UPDATE %TABLE_NAME% SET state = 'P', owner_token = ?, fingerprint = ?, result = NULL,
				expires_at = %NOW_PLUS_MILLIS%
				WHERE idempotency_key = ? AND owner_token = ? AND (expires_at <= %NOW% OR state = 'D')""");
		// Only a take-over writes another token, so a token that still holds, even past
		// the lease, proves nobody else ran.
		this.complete = sql.apply("""
				UPDATE %TABLE_NAME% SET state = 'C', result = ?, expires_at = %NOW_PLUS_MILLIS%
				WHERE idempotency_key = ? AND owner_token = ? AND state = 'P'""");
		// A concurrent claim makes this INSERT lose like any other.
		this.insertCompleted = sql.apply("""
				INSERT INTO %TABLE_NAME% (idempotency_key, state, owner_token, fingerprint, result, expires_at)
				VALUES (?, 'C', ?, ?, ?, %NOW_PLUS_MILLIS%)%INSERT_SUFFIX%""");
		this.release = sql.apply("""
				DELETE FROM %TABLE_NAME%
				WHERE idempotency_key = ? AND owner_token = ? AND state = 'P'""");
		// A released takeover becomes a tombstone rather than going, so that the next
		// claim still knows it takes over a call that never finished.
		this.releaseTakeover = sql.apply("""
				UPDATE %TABLE_NAME% SET state = 'D'
				WHERE idempotency_key = ? AND owner_token = ? AND state = 'P'""");
		this.renew = sql.apply("""
				UPDATE %TABLE_NAME% SET expires_at = %NOW_PLUS_MILLIS%
				WHERE idempotency_key = ? AND owner_token = ? AND state = 'P'""");
		this.version = sql.apply("""
				SELECT state, owner_token, expires_at FROM %TABLE_NAME% WHERE idempotency_key = ?""");
		// The state is a literal, for PostgreSQL to match the partial index's predicate.
		this.inProgress = sql.apply("""
				SELECT idempotency_key, owner_token, fingerprint, %MILLIS_LEFT% AS millis_left
				FROM %TABLE_NAME% WHERE state = 'P' AND idempotency_key > ? AND expires_at > %NOW%
				ORDER BY idempotency_key LIMIT ?""");
		this.delete = sql.apply("""
				DELETE FROM %TABLE_NAME% WHERE idempotency_key = ?""");
		// A tombstone is left to the purge, lest its owner write its record anew.
		this.deleteUnlessHeld = sql.apply("""
				DELETE FROM %TABLE_NAME% WHERE idempotency_key = ?
				AND (state = 'C' OR (state = 'P' AND expires_at <= %NOW%))""");
		// The row becomes a tombstone with the owner's token: the owner's renewal cannot
		// write it anew, and complete, release and renew match state P only.
		this.deleteInProgress = sql.apply("""
				UPDATE %TABLE_NAME% SET state = 'D'
				WHERE idempotency_key = ? AND state = 'P'""");
		this.exists = sql.apply("""
				SELECT COUNT(*) FROM %TABLE_NAME% WHERE idempotency_key = ?""");
		// A completion whose reply was lost landed: the row is still its owner's.
		this.completedBy = sql.apply("""
				SELECT COUNT(*) FROM %TABLE_NAME% WHERE idempotency_key = ? AND owner_token = ? AND state = 'C'""");
		this.recordExists = sql.apply("""
				SELECT COUNT(*) FROM %TABLE_NAME% WHERE idempotency_key = ? AND state <> 'D'""");
		this.claim = sql.apply(dialect.claim);
		this.purge = sql.apply(dialect.purge);
		this.purgeLock = sql.apply(dialect.purgeLock);
	}

}
