package io.github.idempotent.messaging.amqp;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

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

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.IdempotencyKeyException;
import io.github.idempotent.core.IdempotencyScopeException;

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
				"idempotent.messaging.stamp-outgoing=false", "spring.rabbitmq.listener.simple.prefetch=1",
				"spring.rabbitmq.listener.simple.default-requeue-rejected=false" })
class RabbitNestedCallScopeTests {

	static final String RUN = UUID.randomUUID().toString().substring(0, 8);

	static final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

	static final Map<String, List<RuntimeException>> failures = new ConcurrentHashMap<>();

	@Autowired
	RabbitTemplate rabbit;

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

	private static int runs(String name) {
		return runs.computeIfAbsent(name, (k) -> new AtomicInteger()).get();
	}

	private static List<RuntimeException> failures(String name) {
		return failures.computeIfAbsent(name, (k) -> new CopyOnWriteArrayList<>());
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
		for (String name : List.of("pay", "pay-mono")) {
			publish(name, "alice:r1:10");
			publish(name, "bob:r1:10");
			assertThat(List.of(deadLetter(name), deadLetter(name))).containsExactly("alice:r1:10", "bob:r1:10");
			assertThat(runs(name)).as(name).isZero();
			assertThat(failures(name)).as(name)
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
		assertThat(runs("ship")).isZero();
		assertThat(failures("ship")).singleElement()
			.isInstanceOf(IdempotencyKeyException.class)
			.extracting(Throwable::getMessage)
			.asString()
			.startsWith("Idempotency key is required");
	}

	public record PayCommand(String user, String ref, int amount) {

		static PayCommand parse(String text) {
			String[] parts = text.split(":");
			return new PayCommand(parts[0], parts[1], Integer.parseInt(parts[2]));
		}

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
		Payments payments() {
			return new Payments();
		}

		@Bean
		Listeners listeners(Payments payments) {
			return new Listeners(payments);
		}

	}

	/**
	 * Services that are scoped by their caller over HTTP; static counts, as the bean is a
	 * class-based proxy.
	 */
	static class Payments {

		private static String run(String name, PayCommand cmd) {
			return name + " receipt #" + runs.computeIfAbsent(name, (k) -> new AtomicInteger()).incrementAndGet()
					+ " for " + cmd.user();
		}

		@Idempotent(name = "nested-pay", key = "#cmd.ref()", payload = "#cmd.amount()")
		public String pay(PayCommand cmd) {
			return run("pay", cmd);
		}

		@Idempotent(name = "nested-pay-mono", key = "#cmd.ref()", payload = "#cmd.amount()")
		public Mono<String> payMono(PayCommand cmd) {
			return Mono.fromSupplier(() -> run("pay-mono", cmd));
		}

		@Idempotent(name = "nested-ship", payload = "#cmd.amount()")
		public String ship(PayCommand cmd) {
			return run("ship", cmd);
		}

	}

	static class Listeners {

		private final Payments payments;

		Listeners(Payments payments) {
			this.payments = payments;
		}

		private static void recorded(String name, Runnable call) {
			try {
				call.run();
			}
			catch (RuntimeException ex) {
				failures(name).add(ex);
				throw ex;
			}
		}

		@RabbitListener(queues = "idempotent-nested-pay-${test.run}")
		public void pay(String command) {
			recorded("pay", () -> this.payments.pay(PayCommand.parse(command)));
		}

		@RabbitListener(queues = "idempotent-nested-pay-mono-${test.run}")
		public void payMono(String command) {
			recorded("pay-mono", () -> this.payments.payMono(PayCommand.parse(command)).block());
		}

		@RabbitListener(queues = "idempotent-nested-ship-${test.run}")
		public void ship(String commands) {
			recorded("ship", () -> {
				for (String command : commands.split(",")) {
					this.payments.ship(PayCommand.parse(command));
				}
			});
		}

	}

}
