package io.github.idempotent.demo.checkout;

import java.sql.Timestamp;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

@Repository
class Ledger {

	static final String PAYMENT = "PAYMENT";

	static final String REFUND = "REFUND";

	private static final RowMapper<LedgerEntry> ENTRY = (rs, row) -> new LedgerEntry(rs.getString("id"),
			rs.getLong("account_id"), rs.getString("order_no"), rs.getString("kind"), rs.getLong("amount"),
			rs.getLong("balance_after"), rs.getTimestamp("created_at").toInstant());

	private static final String COLUMNS = "id, account_id, order_no, kind, amount, balance_after, created_at";

	private final JdbcClient jdbc;

	Ledger(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	LedgerEntry record(long accountId, String orderNo, String kind, long amount, long balanceAfter) {
		return record(accountId, orderNo, kind, amount, balanceAfter, null);
	}

	/**
	 * Records a movement made for the request with idempotency key {@code requestKey}
	 * ({@code null} for none), so that a retry of that request can find it
	 * ({@link #findPayment}).
	 */
	LedgerEntry record(long accountId, String orderNo, String kind, long amount, long balanceAfter,
			@Nullable String requestKey) {
		String prefix = PAYMENT.equals(kind) ? "pay_" : "ref_";
		LedgerEntry entry = new LedgerEntry(prefix + UUID.randomUUID().toString().replace("-", ""), accountId, orderNo,
				kind, amount, balanceAfter, Instant.now().truncatedTo(ChronoUnit.MILLIS));
		this.jdbc
			.sql("INSERT INTO ledger_entries (" + COLUMNS
					+ ", request_key) VALUES (:id, :account, :no, :kind, :amount, :balanceAfter, :createdAt, :key)")
			.param("id", entry.id())
			.param("account", entry.accountId())
			.param("no", entry.orderNo())
			.param("kind", entry.kind())
			.param("amount", entry.amount())
			.param("balanceAfter", entry.balanceAfter())
			.param("createdAt", Timestamp.from(entry.createdAt()))
			.param("key", requestKey)
			.update();
		// Read back rather than return the Java object: a later call that finds the
		// order already paid reads the row, and both answers must be identical.
		return findById(entry.id()).orElseThrow();
	}

	Optional<LedgerEntry> find(String orderNo, String kind) {
		return this.jdbc.sql("SELECT " + COLUMNS + " FROM ledger_entries WHERE order_no = :no AND kind = :kind")
			.param("no", orderNo)
			.param("kind", kind)
			.query(ENTRY)
			.optional();
	}

	/**
	 * The payment of {@code orderNo} made for the request with idempotency key
	 * {@code requestKey}, if that request got as far as the debit.
	 */
	Optional<LedgerEntry> findPayment(String orderNo, String requestKey) {
		return this.jdbc
			.sql("SELECT " + COLUMNS
					+ " FROM ledger_entries WHERE order_no = :no AND kind = :kind AND request_key = :key")
			.param("no", orderNo)
			.param("kind", PAYMENT)
			.param("key", requestKey)
			.query(ENTRY)
			.optional();
	}

	Optional<LedgerEntry> findById(String id) {
		return this.jdbc.sql("SELECT " + COLUMNS + " FROM ledger_entries WHERE id = :id")
			.param("id", id)
			.query(ENTRY)
			.optional();
	}

	List<LedgerEntry> ofAccount(long accountId) {
		return this.jdbc
			.sql("SELECT " + COLUMNS + " FROM ledger_entries WHERE account_id = :account ORDER BY created_at, id")
			.param("account", accountId)
			.query(ENTRY)
			.list();
	}

}
