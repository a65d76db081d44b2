package io.github.idempotent.demo;

import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.ActiveProfiles;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shipping step over the local RabbitMQ (profile {@code rabbit}): the payment event
 * published twice, consumed by two consumers on the queue, gives one shipment. A queue of
 * its own per run, deleted afterwards.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.ttl=10m", "demo.shipping.queue=" + RabbitShippingTests.QUEUE })
@ActiveProfiles("rabbit")
class RabbitShippingTests {

	static final String QUEUE = "demo.test.payment-captured.run";

	@LocalServerPort
	int port;

	@Autowired
	JdbcClient jdbc;

	DemoHttp http;

	@BeforeEach
	void client() {
		this.http = new DemoHttp(this.port);
	}

	@AfterAll
	static void deleteQueues() {
		CachingConnectionFactory connections = new CachingConnectionFactory("127.0.0.1", 5672);
		try {
			RabbitAdmin admin = new RabbitAdmin(connections);
			admin.deleteQueue(QUEUE);
			admin.deleteQueue(QUEUE + ".dlq");
		}
		finally {
			connections.destroy();
		}
	}

	@Test
	void paymentEventDeliveredTwiceOverRabbitShipsOnce() {
		long account = this.http.openAccount(1_000);
		String orderNo = "rabbit-" + UUID.randomUUID().toString().substring(0, 13);
		this.http.createOrder(orderNo, account, 200).expect(201);
		long deliveriesBefore = this.http.deliveries();
		String paymentId = this.http.payDeliveringTheEventTwice(orderNo, UUID.randomUUID().toString())
			.expect(201)
			.json()
			.get("paymentId")
			.asString();
		ShippingAssertions.awaitDeliveries(this.http, deliveriesBefore + 2);
		ShippingAssertions.awaitShipped(() -> shipments(paymentId));
		assertThat(shipments(paymentId)).isOne();
	}

	private long shipments(String paymentId) {
		return this.jdbc.sql("SELECT COUNT(*) FROM shipments WHERE payment_id = ?")
			.param(paymentId)
			.query(Long.class)
			.single();
	}

}
