package io.github.idempotent.messaging.amqp;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStringCommands.SetOption;
import org.springframework.data.redis.core.types.Expiration;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A message whose record was damaged in Redis after it was processed, delivered again to
 * a {@code @RabbitListener} on the RabbitMQ at 127.0.0.1:5672: the listener does not run
 * again, and the message goes to the dead-letter queue at once, since every redelivery
 * would find the same record.
 */
@SpringBootTest(classes = RabbitListenerDamagedRecordTests.App.class,
		properties = { "spring.rabbitmq.host=127.0.0.1", "spring.rabbitmq.port=5672", "idempotent.store.type=redis",
				"idempotent.messaging.stamp-outgoing=false", "spring.rabbitmq.listener.simple.prefetch=1" })
class RabbitListenerDamagedRecordTests {

	static final String RUN = UUID.randomUUID().toString().substring(0, 8);

	static final String PREFIX = "damaged-rabbit-" + RUN;

	static final AtomicInteger payments = new AtomicInteger();

	@Autowired
	RabbitTemplate rabbit;

	@Autowired
	RedisConnectionFactory connectionFactory;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add("test.run", () -> RUN);
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
		registry.add("idempotent.key-prefix", () -> PREFIX);
	}

	@AfterAll
	static void deleteQueues() {
		RabbitTestQueues.deleteWithDeadLetters(List.of(queue()));
	}

	static String queue() {
		return "idempotent-damaged-" + RUN;
	}

	@Test
	void redeliveryOfAMessageWhoseRecordIsDamagedIsDeadLetteredWithoutRunning() {
		String messageId = UUID.randomUUID().toString();
		this.rabbit.send("", queue(), RabbitTestQueues.text(messageId, "payment-1"));
		await().until(() -> payments.get() == 1);
		byte[] recordKey = recordKey(messageId);
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			connection.stringCommands()
				.set(recordKey, "garbage".getBytes(StandardCharsets.UTF_8), Expiration.seconds(600),
						SetOption.upsert());
		}
		this.rabbit.send("", queue(), RabbitTestQueues.text(messageId, "payment-1"));
		Message dead = this.rabbit.receive(queue() + ".dlq", 10_000);
		assertThat(dead).as("message on the dead-letter queue").isNotNull();
		assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo("payment-1");
		assertThat(dead.getMessageProperties().getXDeathHeader().get(0).get("count")).isEqualTo(1L);
		assertThat(payments).as("runs of the listener").hasValue(1);
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			connection.keyCommands().del(recordKey);
		}
	}

	private byte[] recordKey(String messageId) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			Set<byte[]> keys = connection.keyCommands()
				.keys((PREFIX + ":*:" + messageId).getBytes(StandardCharsets.UTF_8));
			assertThat(keys).hasSize(1);
			return keys.iterator().next();
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		Declarables queues() {
			return RabbitTestQueues.withDeadLetters(List.of(queue()));
		}

		@Bean
		Listeners listeners() {
			return new Listeners();
		}

	}

	static class Listeners {

		@RabbitListener(queues = "idempotent-damaged-${test.run}")
		@Idempotent(name = "damaged")
		public void pay(String payment) {
			payments.incrementAndGet();
		}

	}

}
