-- A schema script of the application's own, given as idempotent.store.jdbc.schema.
CREATE TABLE IF NOT EXISTS idempotency_record (
	idempotency_key VARCHAR(512) NOT NULL PRIMARY KEY,
	state CHAR(1) NOT NULL,
	owner_token VARCHAR(64) NOT NULL,
	fingerprint VARCHAR(255) NOT NULL,
	result BLOB,
	expires_at TIMESTAMP WITH TIME ZONE NOT NULL
);
CREATE TABLE custom_schema_ran (id INT);
