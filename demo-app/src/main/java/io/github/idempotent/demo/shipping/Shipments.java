package io.github.idempotent.demo.shipping;

import java.sql.Timestamp;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;

import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

@Repository
class Shipments {

	private static final RowMapper<Shipment> SHIPMENT = (rs, row) -> new Shipment(rs.getString("id"),
			rs.getString("payment_id"), rs.getString("order_no"), rs.getLong("account_id"),
			rs.getTimestamp("created_at").toInstant());

	private final JdbcClient jdbc;

	Shipments(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	Shipment create(PaymentCaptured event) {
		Shipment shipment = new Shipment("shp_" + UUID.randomUUID().toString().replace("-", ""), event.paymentId(),
				event.orderNo(), event.accountId(), Instant.now().truncatedTo(ChronoUnit.MILLIS));
		this.jdbc
			.sql("INSERT INTO shipments (id, payment_id, order_no, account_id, created_at) "
					+ "VALUES (:id, :payment, :no, :account, :createdAt)")
			.param("id", shipment.shipmentId())
			.param("payment", shipment.paymentId())
			.param("no", shipment.orderNo())
			.param("account", shipment.accountId())
			.param("createdAt", Timestamp.from(shipment.createdAt()))
			.update();
		return shipment;
	}

	List<Shipment> ofAccount(long accountId) {
		return this.jdbc
			.sql("SELECT id, payment_id, order_no, account_id, created_at FROM shipments WHERE account_id = :account "
					+ "ORDER BY created_at, id")
			.param("account", accountId)
			.query(SHIPMENT)
			.list();
	}

}
