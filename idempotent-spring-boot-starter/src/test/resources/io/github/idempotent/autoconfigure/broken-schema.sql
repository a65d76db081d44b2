-- A schema script that fails: the start-up must stop rather than go on without a table.
CREATE TABLE idempotency_record (this is not sql);
