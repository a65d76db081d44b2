-- One shipment per payment. The UNIQUE constraint is the last line of defence: the
-- shipping consumer's @Idempotent (keyed by the payment id) is what keeps a payment
-- event delivered twice from shipping twice.
CREATE TABLE shipments (
	id VARCHAR(40) NOT NULL,
	payment_id VARCHAR(40) NOT NULL,
	order_no VARCHAR(64) NOT NULL,
	account_id BIGINT NOT NULL,
	created_at TIMESTAMP(3) NOT NULL,
	CONSTRAINT pk_shipments PRIMARY KEY (id),
	CONSTRAINT uq_shipments_payment UNIQUE (payment_id),
	CONSTRAINT fk_shipments_account FOREIGN KEY (account_id) REFERENCES accounts (id)
);

CREATE INDEX ix_shipments_account ON shipments (account_id);
