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
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.amqp.support.AmqpHeaders;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.IdempotencyException;
import io.github.idempotent.core.IdempotencyInProgressException;
import io.github.idempotent.core.IdempotencyKeyReusedException;
import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyPolicy;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code @Idempotent} on {@code @RabbitListener} methods against the RabbitMQ at
 * 127.0.0.1:5672 and the test Redis: duplicates of every kind give one side effect, an
 * in-progress duplicate is redelivered rather than dead-lettered, and what no redelivery
 * can fix goes to the dead-letter queue at once. Every queue has a name of its own per
 * run and is deleted afterwards.
 */
@ExtendWith(OutputCaptureExtension.class)
@SpringBootTest(classes = RabbitListenerIdempotencyTests.App.class,
		properties = { "spring.rabbitmq.host=127.0.0.1", "spring.rabbitmq.port=5672", "idempotent.store.type=redis",
				"idempotent.messaging.in-progress-back-off=50ms", "idempotent.messaging.stamp-outgoing=false",
				"spring.rabbitmq.listener.simple.prefetch=1" })
class RabbitListenerIdempotencyTests {

	static final String RUN = UUID.randomUUID().toString().substring(0, 8);

	static final Map<String, AtomicInteger> sideEffects = new ConcurrentHashMap<>();

	static final Map<String, AtomicInteger> replays = new ConcurrentHashMap<>();

	static final Map<String, AtomicInteger> inProgress = new ConcurrentHashMap<>();

	static final Map<String, AtomicInteger> reused = new ConcurrentHashMap<>();

	static final CountDownLatch raceInProgressSeen = new CountDownLatch(1);

	@Autowired
	RabbitTemplate rabbit;

	@Autowired
	RabbitListenerEndpointRegistry listeners;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
		registry.add("idempotent.key-prefix", () -> "rabbit-test-" + RUN);
		registry.add("test.run", () -> RUN);
	}

	@AfterAll
	static void deleteQueues() {
		RabbitTestQueues.deleteWithDeadLetters(App.NAMES.stream().map((name) -> queue(name)).toList());
	}

	static String queue(String name) {
		return "idempotent-test-" + name + "-" + RUN;
	}

	private void publish(String name, String messageId, String body) {
		this.rabbit.send("", queue(name), RabbitTestQueues.text(messageId, body));
	}

	private static int count(Map<String, AtomicInteger> counts, String name) {
		return counts.computeIfAbsent(name, (k) -> new AtomicInteger()).get();
	}

	private void awaitDrained(String name) {
		await().atMost(Duration.ofSeconds(20))
			.until(() -> this.rabbit.execute((channel) -> channel.messageCount(queue(name))) == 0);
	}

	@Test
	void sameMessagePublishedTwentyTimesHasOneSideEffect() {
		String id = UUID.randomUUID().toString();
		for (int i = 0; i < 20; i++) {
			publish("twenty", id, "payment-1");
		}
		await().atMost(Duration.ofSeconds(20)).until(() -> count(replays, "twenty") == 19);
		assertThat(count(sideEffects, "twenty")).isEqualTo(1);
		assertThat(this.rabbit.receive(queue("twenty") + ".dlq")).isNull();
	}

	@Test
	void consumerKilledBeforeItsAckHasOneSideEffectWhenASecondInstanceGetsTheRedelivery() {
		// Manual acknowledgement that never comes: the consumer "dies" after its side
		// effect, before its ack. Stopping its container closes its channel, and the
		// broker hands the message to the other instance, flagged redelivered.
		this.listeners.getListenerContainer("crashing").start();
		publish("crash", UUID.randomUUID().toString(), "payment-2");
		await().atMost(Duration.ofSeconds(10)).until(() -> count(sideEffects, "crash") == 1);
		this.listeners.getListenerContainer("crashing").stop();
		this.listeners.getListenerContainer("survivor").start();
		try {
			await().atMost(Duration.ofSeconds(20)).until(() -> count(replays, "crash") == 1);
			awaitDrained("crash");
			assertThat(count(sideEffects, "crash")).isEqualTo(1);
			assertThat(this.rabbit.receive(queue("crash") + ".dlq")).isNull();
		}
		finally {
			this.listeners.getListenerContainer("survivor").stop();
		}
	}

	@Test
	void twoConsumersRacingOnDuplicatesHaveOneSideEffectAndTheInProgressOneIsRedeliveredNotDeadLettered() {
		String id = UUID.randomUUID().toString();
		for (int i = 0; i < 5; i++) {
			publish("race", id, "payment-3");
		}
		// The first delivery holds its claim until a duplicate has been refused as in
		// progress (and requeued); then every duplicate is redelivered and acknowledged
		// without running.
		await().atMost(Duration.ofSeconds(20)).until(() -> count(replays, "race") == 4);
		awaitDrained("race");
		assertThat(count(sideEffects, "race")).isEqualTo(1);
		assertThat(count(inProgress, "race")).isPositive();
		assertThat(this.rabbit.receive(queue("race") + ".dlq")).isNull();
	}

	@Test
	void keyReusedWithAnotherPayloadIsDeadLetteredAtOnceNotRequeued(CapturedOutput output) {
		String id = UUID.randomUUID().toString();
		publish("mismatch", id, "payment-4");
		await().atMost(Duration.ofSeconds(10)).until(() -> count(sideEffects, "mismatch") == 1);
		publish("mismatch", id, "payment-4-changed");
		Message dead = this.rabbit.receive(queue("mismatch") + ".dlq", 10_000);
		assertThat(dead).isNotNull();
		assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo("payment-4-changed");
		List<Map<String, ?>> deaths = dead.getMessageProperties().getXDeathHeader();
		assertThat(deaths).isNotEmpty();
		assertThat(deaths.get(0).get("reason")).isEqualTo("rejected");
		assertThat(deaths.get(0).get("queue")).isEqualTo(queue("mismatch"));
		// Rejected once, not requeued first.
		assertThat(deaths.get(0).get("count")).isEqualTo(1L);
		assertThat(count(reused, "mismatch")).isEqualTo(1);
		assertThat(count(sideEffects, "mismatch")).isEqualTo(1);
		// An expected dead-letter: one line that names the message, no stack trace.
		List<String> lines = output.getOut().lines().filter((line) -> line.contains(id)).toList();
		assertThat(lines).singleElement()
			.asString()
			.contains("WARN")
			.contains("dead-letter")
			.contains(queue("mismatch"));
		assertThat(output).doesNotContain("Execution of Rabbit message listener failed")
			.doesNotContain("ListenerExecutionFailedException");
	}

	@Test
	void messageWithoutAnyKeyIsDeadLetteredNotRunNorRequeued() {
		publish("keyless", null, "payment-5");
		Message dead = this.rabbit.receive(queue("keyless") + ".dlq", 10_000);
		assertThat(dead).isNotNull();
		assertThat(dead.getMessageProperties().getXDeathHeader().get(0).get("count")).isEqualTo(1L);
		assertThat(count(sideEffects, "keyless")).isZero();
	}

	@Test
	void listenerTakingTheAmqpMessageFingerprintsItsBody() {
		String id = UUID.randomUUID().toString();
		publish("raw", id, "payment-6");
		publish("raw", id, "payment-6");
		await().atMost(Duration.ofSeconds(10)).until(() -> count(replays, "raw") == 1);
		awaitDrained("raw");
		assertThat(count(sideEffects, "raw")).isEqualTo(1);
		assertThat(this.rabbit.receive(queue("raw") + ".dlq")).isNull();
	}

	@Test
	void keyFromAHeaderExpression() {
		Message message = MessageBuilder.withBody("payment-7".getBytes(StandardCharsets.UTF_8))
			.setContentType("text/plain")
			.setHeader("x-payment-id", "p-" + UUID.randomUUID())
			.build();
		for (int i = 0; i < 3; i++) {
			// A new message-id each time: only the header makes them one.
			message.getMessageProperties().setMessageId(UUID.randomUUID().toString());
			this.rabbit.send("", queue("header"), message);
		}
		await().atMost(Duration.ofSeconds(10)).until(() -> count(replays, "header") == 2);
		assertThat(count(sideEffects, "header")).isEqualTo(1);
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		static final List<String> NAMES = List.of("twenty", "crash", "race", "mismatch", "keyless", "raw", "header");

		@Bean
		Declarables queues() {
			return RabbitTestQueues.withDeadLetters(NAMES.stream().map((name) -> queue(name)).toList());
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
						inProgress.computeIfAbsent(policy.name(), (k) -> new AtomicInteger()).incrementAndGet();
						if ("race".equals(policy.name())) {
							raceInProgressSeen.countDown();
						}
					}
					if (reason instanceof IdempotencyKeyReusedException) {
						reused.computeIfAbsent(policy.name(), (k) -> new AtomicInteger()).incrementAndGet();
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

		private static void sideEffect(String name) {
			sideEffects.computeIfAbsent(name, (k) -> new AtomicInteger()).incrementAndGet();
		}

		@RabbitListener(queues = "idempotent-test-twenty-${test.run}", concurrency = "3")
		@Idempotent(name = "twenty")
		public void twenty(String payment) {
			sideEffect("twenty");
		}

		@RabbitListener(id = "crashing", queues = "idempotent-test-crash-${test.run}", ackMode = "MANUAL",
				autoStartup = "false")
		@Idempotent(name = "crash")
		public void crashing(String payment) {
			sideEffect("crash");
		}

		@RabbitListener(id = "survivor", queues = "idempotent-test-crash-${test.run}", autoStartup = "false")
		@Idempotent(name = "crash")
		public void survivor(String payment, @Header(AmqpHeaders.REDELIVERED) boolean redelivered) {
			sideEffect("crash");
		}

		@RabbitListener(queues = "idempotent-test-race-${test.run}", concurrency = "2")
		@Idempotent(name = "race")
		public void race(String payment) throws InterruptedException {
			sideEffect("race");
			raceInProgressSeen.await(10, TimeUnit.SECONDS);
		}

		@RabbitListener(queues = "idempotent-test-mismatch-${test.run}")
		@Idempotent(name = "mismatch")
		public void mismatch(String payment) {
			sideEffect("mismatch");
		}

		@RabbitListener(queues = "idempotent-test-keyless-${test.run}")
		@Idempotent(name = "keyless")
		public void keyless(String payment) {
			sideEffect("keyless");
		}

		@RabbitListener(queues = "idempotent-test-raw-${test.run}")
		@Idempotent(name = "raw", key = "#message.messageProperties.messageId")
		public void raw(Message message) {
			sideEffect("raw");
		}

		@RabbitListener(queues = "idempotent-test-header-${test.run}")
		@Idempotent(name = "header", key = "#headers['x-payment-id']")
		public void header(String payment) {
			sideEffect("header");
		}

	}

}
