-- Idempotency records for JdbcIdempotencyStore on PostgreSQL.
-- One row per scoped key: state P (in progress, expires_at is the lease), D (tombstone of an
-- operator's forced delete) or C (completed, expires_at is the end of the TTL). The purge
-- deletes C rows past their TTL, and P and D rows (calls that never finished) only once the
-- store's take-over memory (24 h by default) has passed since their lease: until then a claim
-- that takes one over knows which attempt it is. The owner token carries the claim time and the
-- attempt number (see ClaimToken), so no column holds them. The key length matches JdbcIdempotencyStore.maxKeyLength().
CREATE TABLE IF NOT EXISTS idempotency_record (
	idempotency_key VARCHAR(512) NOT NULL,
	state CHAR(1) NOT NULL,
	owner_token VARCHAR(64) NOT NULL,
	fingerprint VARCHAR(255) NOT NULL,
	result BYTEA,
	expires_at TIMESTAMP WITH TIME ZONE NOT NULL,
	CONSTRAINT idempotency_record_pk PRIMARY KEY (idempotency_key)
);
CREATE INDEX IF NOT EXISTS idempotency_record_expires_at_idx ON idempotency_record (expires_at);
-- The in-progress rows, in key order, for the Actuator endpoint's listing of stuck keys:
-- partial, so it holds only the few rows of calls still running, not every stored result.
CREATE INDEX IF NOT EXISTS idempotency_record_in_progress_idx ON idempotency_record (idempotency_key)
	WHERE state = 'P';
