package io.github.idempotent.messaging.amqp;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
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

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code @Idempotent} on {@code @RabbitListener} methods that return a
 * {@code CompletableFuture} or a {@code Mono}, against the RabbitMQ at 127.0.0.1:5672:
 * Spring AMQP acknowledges them when their result completes, past the container's advice
 * chain and error handler, so a refusal must still reach the broker as a rejection.
 */
@SpringBootTest(classes = RabbitAsyncListenerTests.App.class,
		properties = { "spring.rabbitmq.host=127.0.0.1", "spring.rabbitmq.port=5672", "idempotent.store.type=memory",
				"idempotent.messaging.in-progress-back-off=50ms", "idempotent.messaging.stamp-outgoing=false",
				"spring.rabbitmq.listener.simple.prefetch=1" })
class RabbitAsyncListenerTests {

	static final String RUN = UUID.randomUUID().toString().substring(0, 8);

	static final Map<String, AtomicInteger> sideEffects = new ConcurrentHashMap<>();

	static final Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();

	@Autowired
	RabbitTemplate rabbit;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add("test.run", () -> RUN);
	}

	@AfterAll
	static void deleteQueues() {
		RabbitTestQueues.deleteWithDeadLetters(App.NAMES.stream().map(RabbitAsyncListenerTests::queue).toList());
	}

	static String queue(String name) {
		return "idempotent-async-" + name + "-" + RUN;
	}

	private static int count(Map<String, AtomicInteger> counts, String name) {
		return counts.computeIfAbsent(name, (k) -> new AtomicInteger()).get();
	}

	@Test
	void futureListenerKeyReusedWithAnotherPayloadIsDeadLetteredNotRequeuedForever() {
		keyReusedWithAnotherPayloadIsDeadLettered("future");
	}

	@Test
	void monoListenerKeyReusedWithAnotherPayloadIsDeadLetteredNotRequeuedForever() {
		keyReusedWithAnotherPayloadIsDeadLettered("mono");
	}

	private void keyReusedWithAnotherPayloadIsDeadLettered(String name) {
		String id = UUID.randomUUID().toString();
		this.rabbit.send("", queue(name), RabbitTestQueues.text(id, "payment-1"));
		await().atMost(Duration.ofSeconds(10)).until(() -> count(sideEffects, name) == 1);
		this.rabbit.send("", queue(name), RabbitTestQueues.text(id, "payment-1-changed"));
		Message dead = this.rabbit.receive(queue(name) + ".dlq", 10_000);
		assertThat(dead).as("the reused key's message on the dead-letter queue").isNotNull();
		assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo("payment-1-changed");
		List<Map<String, ?>> deaths = dead.getMessageProperties().getXDeathHeader();
		assertThat(deaths.get(0).get("reason")).isEqualTo("rejected");
		assertThat(deaths.get(0).get("count")).isEqualTo(1L);
		assertThat(count(sideEffects, name)).isEqualTo(1);
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		static final List<String> NAMES = List.of("future", "mono");

		@Bean
		Declarables queues() {
			return RabbitTestQueues.withDeadLetters(NAMES.stream().map(RabbitAsyncListenerTests::queue).toList());
		}

		@Bean
		Listeners listeners() {
			return new Listeners();
		}

	}

	static class Listeners {

		private static void sideEffect(String name) {
			sideEffects.computeIfAbsent(name, (k) -> new AtomicInteger()).incrementAndGet();
		}

		@RabbitListener(queues = "idempotent-async-future-${test.run}")
		@Idempotent(name = "async-future")
		public CompletableFuture<Void> future(String payment) {
			return CompletableFuture.runAsync(() -> sideEffect("future"));
		}

		@RabbitListener(queues = "idempotent-async-mono-${test.run}")
		@Idempotent(name = "async-mono")
		public Mono<Void> mono(String payment) {
			return Mono.fromRunnable(() -> sideEffect("mono"));
		}

	}

}
