package io.github.idempotent.messaging.amqp;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.amqp.support.AmqpHeaders;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.messaging.handler.annotation.Header;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.annotation.DuplicateHandling;
import io.github.idempotent.core.IdempotencyContext;
import io.github.idempotent.core.IdempotencyScopeResolver;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.InspectableIdempotencyStore;
import io.github.idempotent.store.RecordKey;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code @Idempotent(onDuplicate)} on {@code @RabbitListener} methods, against the
 * RabbitMQ at 127.0.0.1:5672 and a real store (a subclass per store): one message
 * delivered twice with the same message id is replayed, skipped or handed to the listener
 * again flagged, and each way is counted in {@code idempotent.calls}. Every message asks
 * for a reply, which shows what the second delivery answered: the stored result, nothing,
 * or the flagged run's own.
 */
@SpringBootTest(classes = AbstractRabbitDuplicateHandlingTests.App.class,
		properties = { "spring.rabbitmq.host=127.0.0.1", "spring.rabbitmq.port=5672",
				"idempotent.messaging.in-progress-back-off=50ms", "idempotent.messaging.stamp-outgoing=false",
				"spring.rabbitmq.listener.simple.prefetch=1" })
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractRabbitDuplicateHandlingTests {

	static final List<String> MODES = List.of("replay", "skip", "flag");

	@Autowired
	RabbitTemplate rabbit;

	@Autowired
	RabbitListenerEndpointRegistry containers;

	@Autowired
	Listeners listeners;

	@Autowired
	MeterRegistry meters;

	@Autowired
	IdempotencyStore store;

	@Value("${test.run}")
	String run;

	@Value("${idempotent.key-prefix}")
	String prefix;

	@AfterAll
	void deleteQueues() {
		List<String> queues = MODES.stream().map(this::queue).toList();
		RabbitTestQueues.deleteWithDeadLetters(queues);
		RabbitTestQueues.deleteWithDeadLetters(queues.stream().map((queue) -> queue + ".replies").toList());
	}

	@Test
	void replayedDuplicateRunsTheListenerOnceAndRepliesWithTheStoredResult() {
		String id = deliverTwice("replay");
		await().atMost(Duration.ofSeconds(20)).until(() -> count("dup-replay", "replayed") == 1);
		assertThat(reply("replay")).isEqualTo("shipped order-1 #1");
		assertThat(reply("replay")).isEqualTo("shipped order-1 #1");
		assertAcknowledged("replay");
		assertThat(this.listeners.runs("dup-replay")).containsExactly(id + " first");
	}

	@Test
	void skippedDuplicateIsAcknowledgedWithoutRunningTheListenerOrReplying() {
		String id = deliverTwice("skip");
		await().atMost(Duration.ofSeconds(20)).until(() -> count("dup-skip", "skipped") == 1);
		assertThat(reply("skip")).isEqualTo("shipped order-1 #1");
		assertAcknowledged("skip");
		assertThat(this.rabbit.receive(queue("skip") + ".replies", 200)).isNull();
		assertThat(this.listeners.runs("dup-skip")).containsExactly(id + " first");
		assertThat(count("dup-skip", "skipped")).isEqualTo(1);
		assertThat(count("dup-skip", "replayed")).isZero();
	}

	@Test
	void flaggedDuplicateRunsTheListenerAgainWhichSeesItIsADuplicateAndTheStoredResultStays() {
		String id = UUID.randomUUID().toString();
		deliver("flag", id);
		IdempotencyRecord first = awaitCompleted("dup-flag", id);
		assertThat(reply("flag")).isEqualTo("shipped order-1 #1");
		deliver("flag", id);
		await().atMost(Duration.ofSeconds(20)).until(() -> this.listeners.runs("dup-flag").size() == 2);
		assertThat(reply("flag")).isEqualTo("already shipped order-1 #2");
		assertAcknowledged("flag");
		assertThat(this.listeners.runs("dup-flag")).containsExactly(id + " first", id + " duplicate");
		assertThat(count("dup-flag", "flagged")).isEqualTo(1);
		IdempotencyRecord after = inspect("dup-flag", id);
		assertThat(after.state()).isEqualTo(IdempotencyRecord.State.COMPLETED);
		assertThat(after.fingerprint()).isEqualTo(first.fingerprint());
		assertThat(after.result()).isEqualTo(first.result());
	}

	/**
	 * The message delivered, its processing stored, and the same message delivered again.
	 */
	private String deliverTwice(String mode) {
		String id = UUID.randomUUID().toString();
		deliver(mode, id);
		awaitCompleted("dup-" + mode, id);
		deliver(mode, id);
		return id;
	}

	private void deliver(String mode, String messageId) {
		Message message = RabbitTestQueues.text(messageId, "order-1");
		message.getMessageProperties().setReplyTo(queue(mode) + ".replies");
		this.rabbit.send("", queue(mode), message);
	}

	private String reply(String mode) {
		Message reply = this.rabbit.receive(queue(mode) + ".replies", 10_000);
		assertThat(reply).as("a reply on " + mode).isNotNull();
		return (String) this.rabbit.getMessageConverter().fromMessage(reply);
	}

	/**
	 * Acknowledged, and so neither redelivered nor dead-lettered: once the listener's
	 * consumer has stopped, which would return an unacknowledged message to the queue,
	 * the queue and its dead-letter queue are empty.
	 */
	private void assertAcknowledged(String mode) {
		this.containers.getListenerContainer("dup-" + mode).stop();
		await().atMost(Duration.ofSeconds(10))
			.until(() -> this.rabbit.execute((channel) -> channel.messageCount(queue(mode))) == 0);
		assertThat(this.rabbit.receive(queue(mode) + ".dlq")).isNull();
	}

	private IdempotencyRecord awaitCompleted(String operation, String id) {
		await().atMost(Duration.ofSeconds(20))
			.until(() -> ((InspectableIdempotencyStore) this.store).inspect(recordKey(operation, id))
				.filter((record) -> record.state() == IdempotencyRecord.State.COMPLETED)
				.isPresent());
		return inspect(operation, id);
	}

	private IdempotencyRecord inspect(String operation, String id) {
		return ((InspectableIdempotencyStore) this.store).inspect(recordKey(operation, id)).orElseThrow();
	}

	private RecordKey recordKey(String operation, String id) {
		return RecordKey.of(this.prefix, IdempotencyScopeResolver.GLOBAL, operation, id, this.store.maxKeyLength());
	}

	String queue(String mode) {
		return "idempotent-dup-" + mode + "-" + this.run;
	}

	private double count(String operation, String outcome) {
		Counter counter = this.meters.find("idempotent.calls")
			.tags("operation", operation, "outcome", outcome)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		Declarables queues(@Value("${test.run}") String run) {
			List<String> queues = MODES.stream().map((mode) -> "idempotent-dup-" + mode + "-" + run).toList();
			Stream<Queue> replies = queues.stream().map((queue) -> QueueBuilder.nonDurable(queue + ".replies").build());
			return new Declarables(
					Stream.concat(RabbitTestQueues.withDeadLetters(queues).getDeclarables().stream(), replies)
						.toList());
		}

		@Bean
		MeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

		@Bean
		Listeners listeners() {
			return new Listeners();
		}

	}

	static class Listeners {

		private final Map<String, List<String>> runs = new ConcurrentHashMap<>();

		List<String> runs(String operation) {
			return this.runs.computeIfAbsent(operation, (k) -> new CopyOnWriteArrayList<>());
		}

		private String ship(String operation, String order, String messageId) {
			boolean duplicate = IdempotencyContext.current().orElseThrow().isDuplicate();
			List<String> runs = runs(operation);
			runs.add(messageId + (duplicate ? " duplicate" : " first"));
			return (duplicate ? "already shipped " : "shipped ") + order + " #" + runs.size();
		}

		@RabbitListener(id = "dup-replay", queues = "idempotent-dup-replay-${test.run}")
		@Idempotent(name = "dup-replay")
		public String replay(String order, @Header(AmqpHeaders.MESSAGE_ID) String messageId) {
			return ship("dup-replay", order, messageId);
		}

		@RabbitListener(id = "dup-skip", queues = "idempotent-dup-skip-${test.run}")
		@Idempotent(name = "dup-skip", onDuplicate = DuplicateHandling.SKIP)
		public String skip(String order, @Header(AmqpHeaders.MESSAGE_ID) String messageId) {
			return ship("dup-skip", order, messageId);
		}

		@RabbitListener(id = "dup-flag", queues = "idempotent-dup-flag-${test.run}")
		@Idempotent(name = "dup-flag", onDuplicate = DuplicateHandling.FLAG)
		public String flag(String order, @Header(AmqpHeaders.MESSAGE_ID) String messageId) {
			return ship("dup-flag", order, messageId);
		}

	}

}
