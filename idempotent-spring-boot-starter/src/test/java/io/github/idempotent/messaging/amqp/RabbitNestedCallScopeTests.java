package io.github.idempotent.messaging.amqp;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;

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
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.core.IdempotencyKeyException;
import io.github.idempotent.core.IdempotencyScopeException;
import io.github.idempotent.messaging.NestedPayments;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A service method that a {@code @RabbitListener} calls, with Spring Security on the
 * class path and no caller on the listener's thread, against the RabbitMQ at
 * 127.0.0.1:5672: the message's id and the global scope are the listener method's alone.
 * A nested call that names no scope fails rather than share one record among the users
 * whose commands the queue carries; one that names no key is refused rather than keyed by
 * the message's id. Either way the message goes where the container sends a failed one
 * (here the dead-letter queue) and the service never runs.
 */
@SpringBootTest(classes = RabbitNestedCallScopeTests.App.class,
		properties = { "spring.rabbitmq.host=127.0.0.1", "spring.rabbitmq.port=5672", "idempotent.store.type=memory",
				"idempotent.messaging.stamp-outgoing=false", "spring.rabbitmq.listener.simple.prefetch=1" })
class RabbitNestedCallScopeTests {

	static final String RUN = UUID.randomUUID().toString().substring(0, 8);

	@Autowired
	RabbitTemplate rabbit;

	@Autowired
	NestedPayments payments;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add("test.run", () -> RUN);
	}

	@AfterAll
	static void deleteQueues() {
		RabbitTestQueues.deleteWithDeadLetters(App.NAMES.stream().map(RabbitNestedCallScopeTests::queue).toList());
	}

	static String queue(String name) {
		return "idempotent-nested-" + name + "-" + RUN;
	}

	private void publish(String name, String body) {
		this.rabbit.send("", queue(name), RabbitTestQueues.text(UUID.randomUUID().toString(), body));
	}

	private String deadLetter(String name) {
		Message dead = this.rabbit.receive(queue(name) + ".dlq", 10_000);
		assertThat(dead).as("dead-lettered from " + name).isNotNull();
		return new String(dead.getBody(), StandardCharsets.UTF_8);
	}

	@Test
	void aNestedCallWithoutScopeFailsRatherThanShareOneRecordAmongUsers() {
		// Equal amounts: under one scope, Bob would be handed Alice's receipt.
		for (String method : List.of("pay", "pay-mono")) {
			publish(method, "alice:r1:10");
			publish(method, "bob:r1:10");
			assertThat(List.of(deadLetter(method), deadLetter(method))).containsExactly("alice:r1:10", "bob:r1:10");
			assertThat(this.payments.runs(method)).as(method).isZero();
			assertThat(this.payments.failures(method)).as(method)
				.hasSize(2)
				.allSatisfy((failure) -> assertThat(failure).isInstanceOf(IdempotencyScopeException.class));
		}
	}

	@Test
	void aNestedCallWithoutKeyIsRefusedRatherThanKeyedByTheMessageId() {
		// One message, the service called for two users: keyed by the message's id, the
		// second call would be handed the first one's result.
		publish("ship", "alice:s1:10,bob:s1:10");
		assertThat(deadLetter("ship")).isEqualTo("alice:s1:10,bob:s1:10");
		assertThat(this.payments.runs("ship")).isZero();
		assertThat(this.payments.failures("ship")).singleElement()
			.isInstanceOf(IdempotencyKeyException.class)
			.extracting(Throwable::getMessage)
			.asString()
			.startsWith("Idempotency key is required");
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		static final List<String> NAMES = List.of("pay", "pay-mono", "ship");

		@Bean
		Declarables queues() {
			return RabbitTestQueues.withDeadLetters(NAMES.stream().map(RabbitNestedCallScopeTests::queue).toList());
		}

		@Bean
		NestedPayments payments() {
			return new NestedPayments();
		}

		@Bean
		Listeners listeners(NestedPayments payments) {
			return new Listeners(payments);
		}

	}

	static class Listeners {

		private final NestedPayments payments;

		Listeners(NestedPayments payments) {
			this.payments = payments;
		}

		@RabbitListener(queues = "idempotent-nested-pay-${test.run}")
		public void pay(String commands) {
			NestedPayments.handle(this.payments, "pay", commands);
		}

		@RabbitListener(queues = "idempotent-nested-pay-mono-${test.run}")
		public void payMono(String commands) {
			NestedPayments.handle(this.payments, "pay-mono", commands);
		}

		@RabbitListener(queues = "idempotent-nested-ship-${test.run}")
		public void ship(String commands) {
			NestedPayments.handle(this.payments, "ship", commands);
		}

	}

}
