-- Idempotency records for JdbcIdempotencyStore on MySQL and MariaDB.
-- One row per scoped key: state P (in progress, expires_at is the lease), D (tombstone of an
-- operator's forced delete) or C (completed, expires_at is the end of the TTL), expires_at in
-- UTC (the store compares with UTC_TIMESTAMP(6)). The purge deletes C rows past their TTL,
-- and P and D rows (calls that never finished) only once the store's take-over memory (24 h by
-- default) has passed since their lease: until then a claim that takes one over knows which
-- attempt it is. The owner token carries the claim time and the attempt number (see
-- ClaimToken), so no column holds them.
-- The key is VARBINARY so that it compares byte for byte: the default collations ignore
-- case and trailing spaces, which would let two different keys share one record.
-- 2048 bytes hold the 512 characters of JdbcIdempotencyStore.maxKeyLength() in UTF-8.
-- The state index (InnoDB appends the key to it) serves the Actuator endpoint's listing of
-- the rows in progress. MySQL has no CREATE INDEX IF NOT EXISTS: a table created by an earlier
-- version gets it with ALTER TABLE idempotency_record ADD INDEX idempotency_record_in_progress_idx (state).
CREATE TABLE IF NOT EXISTS idempotency_record (
	idempotency_key VARBINARY(2048) NOT NULL,
	state CHAR(1) NOT NULL,
	owner_token VARCHAR(64) NOT NULL,
	fingerprint VARCHAR(255) NOT NULL,
	result MEDIUMBLOB,
	expires_at DATETIME(6) NOT NULL,
	PRIMARY KEY (idempotency_key),
	INDEX idempotency_record_expires_at_idx (expires_at),
	INDEX idempotency_record_in_progress_idx (state)
) ENGINE = InnoDB;
