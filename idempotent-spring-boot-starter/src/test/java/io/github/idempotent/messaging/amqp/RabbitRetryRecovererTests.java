package io.github.idempotent.messaging.amqp;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.retry.RepublishMessageRecoverer;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.IdempotencyException;
import io.github.idempotent.core.IdempotencyInProgressException;
import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyPolicy;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Boot's listener retry with a {@link RepublishMessageRecoverer}, the set-up that keeps
 * the reason with a dead letter ({@code x-exception-message}): a reused key lands there
 * with its reason, and an in-progress duplicate, which the recoverer would otherwise
 * republish and acknowledge, is requeued until the first delivery completes.
 */
@SpringBootTest(classes = RabbitRetryRecovererTests.App.class,
		properties = { "spring.rabbitmq.host=127.0.0.1", "spring.rabbitmq.port=5672", "idempotent.store.type=redis",
				"idempotent.messaging.in-progress-back-off=50ms", "spring.rabbitmq.listener.simple.prefetch=1",
				"spring.rabbitmq.listener.simple.retry.enabled=true",
				"spring.rabbitmq.listener.simple.retry.max-attempts=2",
				"spring.rabbitmq.listener.simple.retry.initial-interval=10ms" })
class RabbitRetryRecovererTests {

	static final String RUN = UUID.randomUUID().toString().substring(0, 8);

	static final List<String> NAMES = List.of("republish-mismatch", "republish-race");

	static final Map<String, AtomicInteger> sideEffects = new ConcurrentHashMap<>();

	static final Map<String, AtomicInteger> replays = new ConcurrentHashMap<>();

	/**
	 * The first delivery holds its claim until duplicates were refused as in progress
	 * more often than one delivery's retries (max-attempts 2) allow: so a duplicate has
	 * gone through the recoverer at least once.
	 */
	static final CountDownLatch inProgressSeen = new CountDownLatch(3);

	@Autowired
	RabbitTemplate rabbit;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
		registry.add("idempotent.key-prefix", () -> "rabbit-retry-test-" + RUN);
		registry.add("test.run", () -> RUN);
	}

	static String queue(String name) {
		return "idempotent-test-" + name + "-" + RUN;
	}

	@AfterAll
	static void deleteQueues() {
		CachingConnectionFactory connections = new CachingConnectionFactory("127.0.0.1", 5672);
		try {
			RabbitAdmin admin = new RabbitAdmin(connections);
			for (String name : NAMES) {
				admin.deleteQueue(queue(name));
				admin.deleteQueue("error." + queue(name));
			}
		}
		finally {
			connections.destroy();
		}
	}

	private void publish(String name, String id, String body) {
		Message message = MessageBuilder.withBody(body.getBytes(StandardCharsets.UTF_8))
			.setContentType("text/plain")
			.build();
		message.getMessageProperties().setMessageId(id);
		this.rabbit.send("", queue(name), message);
	}

	private static int count(Map<String, AtomicInteger> counts, String name) {
		return counts.computeIfAbsent(name, (k) -> new AtomicInteger()).get();
	}

	@Test
	void keyReusedWithAnotherPayloadIsRepublishedToTheErrorQueueWithTheReason() {
		String id = UUID.randomUUID().toString();
		publish("republish-mismatch", id, "payment-1");
		await().atMost(Duration.ofSeconds(10)).until(() -> count(sideEffects, "republish-mismatch") == 1);
		publish("republish-mismatch", id, "payment-1-changed");
		Message dead = this.rabbit.receive("error." + queue("republish-mismatch"), 10_000);
		assertThat(dead).isNotNull();
		assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo("payment-1-changed");
		assertThat((String) dead.getMessageProperties().getHeader(RepublishMessageRecoverer.X_EXCEPTION_MESSAGE))
			.contains("was already used with a different payload");
		assertThat(count(sideEffects, "republish-mismatch")).isEqualTo(1);
	}

	@Test
	void inProgressDuplicateIsRequeuedNotRepublished() {
		String id = UUID.randomUUID().toString();
		for (int i = 0; i < 4; i++) {
			publish("republish-race", id, "payment-2");
		}
		await().atMost(Duration.ofSeconds(20)).until(() -> count(replays, "republish-race") == 3);
		assertThat(count(sideEffects, "republish-race")).isEqualTo(1);
		assertThat(this.rabbit.receive("error." + queue("republish-race"))).isNull();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		Declarables queues() {
			return new Declarables(NAMES.stream()
				.flatMap((name) -> java.util.stream.Stream.of(QueueBuilder.nonDurable(queue(name)).build(),
						QueueBuilder.nonDurable("error." + queue(name)).build()))
				.toList());
		}

		/**
		 * Republishes to the default exchange with routing key "error." + the queue.
		 */
		@Bean
		RepublishMessageRecoverer republishMessageRecoverer(RabbitTemplate template) {
			return new RepublishMessageRecoverer(template, "");
		}

		@Bean
		IdempotencyObserver countingObserver() {
			return new IdempotencyObserver() {

				@Override
				public void replayed(IdempotencyPolicy policy, String key) {
					replays.computeIfAbsent(policy.name(), (k) -> new AtomicInteger()).incrementAndGet();
				}

				@Override
				public void rejected(IdempotencyPolicy policy, String key, IdempotencyException reason) {
					if (reason instanceof IdempotencyInProgressException) {
						inProgressSeen.countDown();
					}
				}

			};
		}

		@Bean
		Listeners listeners() {
			return new Listeners();
		}

	}

	static class Listeners {

		@RabbitListener(queues = "idempotent-test-republish-mismatch-${test.run}")
		@Idempotent(name = "republish-mismatch")
		public void mismatch(String payment) {
			sideEffects.computeIfAbsent("republish-mismatch", (k) -> new AtomicInteger()).incrementAndGet();
		}

		@RabbitListener(queues = "idempotent-test-republish-race-${test.run}", concurrency = "2")
		@Idempotent(name = "republish-race")
		public void race(String payment) throws InterruptedException {
			sideEffects.computeIfAbsent("republish-race", (k) -> new AtomicInteger()).incrementAndGet();
			inProgressSeen.await(10, TimeUnit.SECONDS);
		}

	}

}
