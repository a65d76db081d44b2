-- One script for H2 (PostgreSQL mode), PostgreSQL and MariaDB: portable types only,
-- ids made by the application (no IDENTITY vs AUTO_INCREMENT), constraints named at
-- table level (MariaDB ignores a REFERENCES written on the column).

CREATE TABLE accounts (
	id BIGINT NOT NULL,
	holder VARCHAR(100) NOT NULL,
	balance BIGINT NOT NULL,
	CONSTRAINT pk_accounts PRIMARY KEY (id),
	CONSTRAINT ck_accounts_balance CHECK (balance >= 0)
);

-- order_no is chosen by the client: creating the same order twice hits the UNIQUE
-- constraint, and the second create returns the first order instead of a new row.
CREATE TABLE orders (
	id VARCHAR(36) NOT NULL,
	order_no VARCHAR(64) NOT NULL,
	account_id BIGINT NOT NULL,
	amount BIGINT NOT NULL,
	status VARCHAR(16) NOT NULL,
	created_at TIMESTAMP(3) NOT NULL,
	CONSTRAINT pk_orders PRIMARY KEY (id),
	CONSTRAINT uq_orders_order_no UNIQUE (order_no),
	CONSTRAINT fk_orders_account FOREIGN KEY (account_id) REFERENCES accounts (id),
	CONSTRAINT ck_orders_amount CHECK (amount > 0)
);

-- Every movement of money. At most one PAYMENT and one REFUND per order: a last line
-- of defence behind the idempotency key and the order's state machine.
CREATE TABLE ledger_entries (
	id VARCHAR(40) NOT NULL,
	account_id BIGINT NOT NULL,
	order_no VARCHAR(64) NOT NULL,
	kind VARCHAR(16) NOT NULL,
	amount BIGINT NOT NULL,
	balance_after BIGINT NOT NULL,
	created_at TIMESTAMP(3) NOT NULL,
	CONSTRAINT pk_ledger_entries PRIMARY KEY (id),
	CONSTRAINT uq_ledger_order_kind UNIQUE (order_no, kind),
	CONSTRAINT fk_ledger_account FOREIGN KEY (account_id) REFERENCES accounts (id)
);

CREATE INDEX ix_ledger_account ON ledger_entries (account_id);
