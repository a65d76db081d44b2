package io.github.idempotent.messaging;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.support.AmqpHeaders;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.context.annotation.Bean;
import org.springframework.messaging.Message;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.core.IdempotencyTemplate;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A Spring Cloud Stream functional consumer ({@code Consumer<Message<T>>}) on the
 * RabbitMQ binder, guarded by {@link IdempotencyTemplate} with the message's AMQP message
 * id as its key: a message delivered several times, to several consumer threads at once,
 * has its side effect once.
 */
@SpringBootTest(classes = SpringCloudStreamConsumerTests.App.class, webEnvironment = WebEnvironment.NONE,
		properties = { "spring.rabbitmq.host=127.0.0.1", "spring.rabbitmq.port=5672", "spring.rabbitmq.username=guest",
				"spring.rabbitmq.password=guest", "idempotent.store.type=redis",
				"spring.cloud.function.definition=shipOrder",
				"spring.cloud.stream.bindings.shipOrder-in-0.group=shipping",
				"spring.cloud.stream.bindings.shipOrder-in-0.consumer.concurrency=3" })
class SpringCloudStreamConsumerTests {

	static final String RUN = UUID.randomUUID().toString().substring(0, 8);

	static final String DESTINATION = "idempotent-stream-orders-" + RUN;

	/**
	 * Every delivery the consumer got, and every shipment it made, per message id: kept
	 * outside the store.
	 */
	static final Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();

	static final Map<String, AtomicInteger> shipments = new ConcurrentHashMap<>();

	@Autowired
	RabbitTemplate rabbit;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
		registry.add("idempotent.key-prefix", () -> "stream-test-" + RUN);
		registry.add("spring.cloud.stream.bindings.shipOrder-in-0.destination", () -> DESTINATION);
	}

	@AfterAll
	static void deleteQueueAndExchange() {
		CachingConnectionFactory connections = new CachingConnectionFactory("127.0.0.1", 5672);
		try {
			RabbitAdmin admin = new RabbitAdmin(connections);
			admin.deleteQueue(DESTINATION + ".shipping");
			admin.deleteExchange(DESTINATION);
		}
		finally {
			connections.destroy();
		}
	}

	private void publish(String messageId, String json) {
		this.rabbit.send(DESTINATION, "orders",
				MessageBuilder.withBody(json.getBytes(StandardCharsets.UTF_8))
					.setContentType("application/json")
					.setMessageId(messageId)
					.build());
	}

	private static int count(Map<String, AtomicInteger> counts, String key) {
		AtomicInteger count = counts.get(key);
		return (count != null) ? count.get() : 0;
	}

	@Test
	void aMessageDeliveredSeveralTimesIsShippedOnce() {
		String id = UUID.randomUUID().toString();
		for (int i = 0; i < 6; i++) {
			publish(id, "{\"orderNo\":\"S-1\",\"quantity\":2}");
		}
		await().atMost(Duration.ofSeconds(30)).until(() -> count(deliveries, id) == 6);
		assertThat(count(shipments, id)).isOne();
	}

	@Test
	void twoMessagesAreTwoShipments() {
		String first = UUID.randomUUID().toString();
		String second = UUID.randomUUID().toString();
		publish(first, "{\"orderNo\":\"S-2\",\"quantity\":1}");
		publish(second, "{\"orderNo\":\"S-3\",\"quantity\":1}");
		publish(first, "{\"orderNo\":\"S-2\",\"quantity\":1}");
		await().atMost(Duration.ofSeconds(30))
			.until(() -> count(deliveries, first) == 2 && count(deliveries, second) == 1);
		assertThat(count(shipments, first)).isOne();
		assertThat(count(shipments, second)).isOne();
	}

	record ShipOrder(String orderNo, int quantity) {
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		/**
		 * The functional consumer: the key is the message id the producer set (any header
		 * the producer keeps across retries works), the payload is fingerprinted so that
		 * the id reused for another order is refused.
		 */
		@Bean
		Consumer<Message<ShipOrder>> shipOrder(IdempotencyTemplate idempotency) {
			return (message) -> {
				String id = message.getHeaders().get(AmqpHeaders.MESSAGE_ID, String.class);
				try {
					// No caller to scope by on a consumer's thread: the message id is
					// the key, the same whoever sent it, in a scope of the consumer's
					// own.
					idempotency.operation("ship-order")
						.key(id)
						.scope("shipping")
						.payload(message.getPayload())
						.waitFor(Duration.ofSeconds(5))
						.run(() -> ship(id, message.getPayload()));
				}
				finally {
					deliveries.computeIfAbsent(id, (k) -> new AtomicInteger()).incrementAndGet();
				}
			};
		}

		private static void ship(String id, ShipOrder order) {
			shipments.computeIfAbsent(id, (k) -> new AtomicInteger()).incrementAndGet();
			try {
				// Long enough for a duplicate on another consumer thread to arrive while
				// the first is still shipping.
				Thread.sleep(100);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

}
