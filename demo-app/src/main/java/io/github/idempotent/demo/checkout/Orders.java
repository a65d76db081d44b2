package io.github.idempotent.demo.checkout;

import java.sql.Timestamp;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.UUID;

import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

import io.github.idempotent.state.JdbcStateTransitions;
import io.github.idempotent.state.TransitionResult;

@Repository
class Orders {

	private static final RowMapper<Order> ORDER = (rs, row) -> new Order(rs.getString("order_no"),
			rs.getLong("account_id"), rs.getLong("amount"), OrderStatus.valueOf(rs.getString("status")),
			rs.getTimestamp("created_at").toInstant());

	private final JdbcClient jdbc;

	private final JdbcStateTransitions<OrderStatus> transitions;

	Orders(JdbcClient jdbc) {
		this.jdbc = jdbc;
		this.transitions = new JdbcStateTransitions<>(OrderStatus.MACHINE, jdbc, "orders", "order_no", "status");
	}

	Optional<Order> find(String orderNo) {
		return this.jdbc.sql("SELECT order_no, account_id, amount, status, created_at FROM orders WHERE order_no = :no")
			.param("no", orderNo)
			.query(ORDER)
			.optional();
	}

	/**
	 * Inserts a new order; a duplicate {@code orderNo} fails on the UNIQUE constraint
	 * with a {@code DuplicateKeyException}.
	 */
	void insert(String orderNo, long accountId, long amount) {
		this.jdbc.sql("""
				INSERT INTO orders (id, order_no, account_id, amount, status, created_at)
				VALUES (:id, :no, :account, :amount, :status, :createdAt)""")
			.param("id", UUID.randomUUID().toString())
			.param("no", orderNo)
			.param("account", accountId)
			.param("amount", amount)
			.param("status", OrderStatus.CREATED.name())
			.param("createdAt", Timestamp.from(Instant.now().truncatedTo(ChronoUnit.MILLIS)))
			.update();
	}

	TransitionResult<OrderStatus> transition(String orderNo, OrderStatus from, OrderStatus to) {
		return this.transitions.transition(orderNo, from, to);
	}

}
