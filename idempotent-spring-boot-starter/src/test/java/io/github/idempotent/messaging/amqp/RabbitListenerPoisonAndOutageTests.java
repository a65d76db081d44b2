package io.github.idempotent.messaging.amqp;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;
import io.github.idempotent.testsupport.ForwardingIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Poison messages and store outages on {@code @RabbitListener} methods, against the
 * RabbitMQ at 127.0.0.1:5672.
 */
@ExtendWith(OutputCaptureExtension.class)
@SpringBootTest(classes = RabbitListenerPoisonAndOutageTests.App.class,
		properties = { "spring.rabbitmq.host=127.0.0.1", "spring.rabbitmq.port=5672",
				"idempotent.messaging.in-progress-back-off=50ms", "idempotent.messaging.stamp-outgoing=false",
				"spring.rabbitmq.listener.simple.prefetch=1" })
class RabbitListenerPoisonAndOutageTests {

	static final String RUN = UUID.randomUUID().toString().substring(0, 8);

	static final Map<String, AtomicInteger> sideEffects = new ConcurrentHashMap<>();

	static final AtomicInteger keyEvaluations = new AtomicInteger();

	@Autowired
	RabbitTemplate rabbit;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add("test.run", () -> RUN);
	}

	@AfterAll
	static void deleteQueues() {
		RabbitTestQueues.deleteWithDeadLetters(App.NAMES.stream().map((name) -> queue(name)).toList());
	}

	static String queue(String name) {
		return "idempotent-poison-" + name + "-" + RUN;
	}

	private void publish(String name, String messageId, String body) {
		this.rabbit.send("", queue(name), RabbitTestQueues.text(messageId, body));
	}

	private static int count(Map<String, AtomicInteger> counts, String name) {
		return counts.computeIfAbsent(name, (k) -> new AtomicInteger()).get();
	}

	/**
	 * A key expression that cannot be evaluated for this message (a header it navigates
	 * is absent) fails every delivery the same way: it should be dead-lettered like a
	 * missing key, not requeued at once, forever.
	 */
	@Test
	void keyExpressionThatCannotBeEvaluatedForAMessageIsDeadLetteredNotRequeuedInAHotLoop(CapturedOutput output) {
		String id = UUID.randomUUID().toString();
		publish("spel", id, "payment-spel");
		Message dead = this.rabbit.receive(queue("spel") + ".dlq", 5_000);
		int evaluations = keyEvaluations.get();
		assertThat(evaluations).as("deliveries of the poison message in ~5 s").isLessThan(10);
		assertThat(dead).as("poison message on the dead-letter queue").isNotNull();
		// One line naming the message, its queue and the reason; no stack trace.
		assertThat(output).contains("Message " + id + " from queue " + queue("spel") + " rejected without requeue")
			.doesNotContain("Execution of Rabbit message listener failed");
	}

	/**
	 * Store down, failure-mode closed: the message must not be acked (it is not), but it
	 * should not be redelivered in a hot loop either.
	 */
	@Test
	void storeOutageRequeuesWithABackOffNotInAHotLoop() throws InterruptedException {
		FlakyStore.down = true;
		try {
			publish("outage", UUID.randomUUID().toString(), "payment-o");
			Thread.sleep(2_000);
			int claims = FlakyStore.claims("outage");
			assertThat(claims).as("claims of one message during a 2 s outage").isLessThan(60);
		}
		finally {
			FlakyStore.down = false;
		}
		await().atMost(Duration.ofSeconds(10)).until(() -> count(sideEffects, "outage") == 1);
	}

	/**
	 * In-memory store that fails with a "store unreachable" exception while
	 * {@link #down}.
	 */
	static class FlakyStore extends ForwardingIdempotencyStore {

		FlakyStore() {
			super(new InMemoryIdempotencyStore());
		}

		static volatile boolean down;

		static final Map<String, AtomicInteger> claims = new ConcurrentHashMap<>();

		static int claims(String name) {
			return count(claims, name);
		}

		@Override
		public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
			for (String name : App.NAMES) {
				if (key.value().contains(name)) {
					claims.computeIfAbsent(name, (k) -> new AtomicInteger()).incrementAndGet();
				}
			}
			if (down) {
				throw new DataAccessResourceFailureException("store down");
			}
			return super.claim(key, fingerprint, lease);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		static final List<String> NAMES = List.of("spel", "outage");

		@Bean
		IdempotencyStore flakyStore() {
			return new FlakyStore();
		}

		@Bean
		Declarables queues() {
			return RabbitTestQueues.withDeadLetters(NAMES.stream().map((name) -> queue(name)).toList());
		}

		@Bean
		Probe probe() {
			return new Probe();
		}

		@Bean
		Listeners listeners() {
			return new Listeners();
		}

	}

	static class Probe {

		public String touch() {
			keyEvaluations.incrementAndGet();
			return "";
		}

	}

	static class Listeners {

		private static void sideEffect(String name) {
			sideEffects.computeIfAbsent(name, (k) -> new AtomicInteger()).incrementAndGet();
		}

		@RabbitListener(queues = "idempotent-poison-spel-${test.run}")
		@Idempotent(name = "spel", key = "@probe.touch() + #headers['x-order-id'].toUpperCase()")
		public void spel(String payment) {
			sideEffect("spel");
		}

		@RabbitListener(queues = "idempotent-poison-outage-${test.run}")
		@Idempotent(name = "outage")
		public void outage(String payment) {
			sideEffect("outage");
		}

	}

}
