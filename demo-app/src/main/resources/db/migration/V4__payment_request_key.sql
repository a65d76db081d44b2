-- The idempotency key of the request that made a payment: a recovery point. A payment whose
-- instance died after the debit committed but before it answered is retried with the same key;
-- the retry, told by the starter that it takes over an attempt that never finished, finds the
-- payment by its key and answers with it as the first attempt would have.
ALTER TABLE ledger_entries ADD COLUMN request_key VARCHAR(255);
