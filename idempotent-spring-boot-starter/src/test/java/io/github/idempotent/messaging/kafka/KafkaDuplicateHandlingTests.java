package io.github.idempotent.messaging.kafka;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.DeadLetterPublishingRecoverer;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.test.EmbeddedKafkaBroker;
import org.springframework.kafka.test.context.EmbeddedKafka;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.kafka.test.utils.KafkaTestUtils;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.util.backoff.FixedBackOff;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.annotation.DuplicateHandling;
import io.github.idempotent.core.IdempotencyContext;
import io.github.idempotent.core.IdempotencyScopeResolver;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.InspectableIdempotencyStore;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code @Idempotent(onDuplicate)} on {@code @KafkaListener} methods, against Spring
 * Kafka's embedded broker and the test Redis: one record published twice with the same
 * {@code Idempotency-Key} header is replayed, skipped or handed to the listener again
 * flagged; either way its offset is committed and nothing goes to the dead-letter topic,
 * and each way is counted in {@code idempotent.calls}.
 */
// Closed when the class ends, broker included: a cached context keeps its embedded broker
// running for the rest of the suite, and every one still open is shut down in the forked
// JVM's exit, which Surefire allows 30 s before it kills the fork.
@DirtiesContext
@EmbeddedKafka(partitions = 1,
		topics = { "k-dup-replay", "k-dup-replay-dlt", "k-dup-skip", "k-dup-skip-dlt", "k-dup-flag", "k-dup-flag-dlt" })
@SpringBootTest(classes = KafkaDuplicateHandlingTests.App.class,
		properties = { "spring.kafka.bootstrap-servers=${spring.embedded.kafka.brokers}",
				"spring.kafka.consumer.auto-offset-reset=earliest", "idempotent.store.type=redis",
				"idempotent.messaging.in-progress-back-off=50ms" })
class KafkaDuplicateHandlingTests {

	static final String RUN = UUID.randomUUID().toString().substring(0, 8);

	@Autowired
	KafkaTemplate<Object, Object> kafka;

	@Autowired
	EmbeddedKafkaBroker broker;

	@Autowired
	Listeners listeners;

	@Autowired
	MeterRegistry meters;

	@Autowired
	IdempotencyStore store;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
		registry.add("idempotent.key-prefix", () -> "kafka-dup-" + RUN);
		registry.add("test.run", () -> RUN);
	}

	@Test
	void replayedDuplicateRunsTheListenerOnceAndIsCommitted() throws Exception {
		String key = publishTwice("k-dup-replay");
		await().atMost(Duration.ofSeconds(30)).until(() -> count("k-dup-replay", "replayed") == 1);
		assertCommittedNotDeadLettered("k-dup-replay");
		assertThat(this.listeners.runs("k-dup-replay")).containsExactly(key + " first");
	}

	@Test
	void skippedDuplicateIsCommittedWithoutRunningTheListener() throws Exception {
		String key = publishTwice("k-dup-skip");
		await().atMost(Duration.ofSeconds(30)).until(() -> count("k-dup-skip", "skipped") == 1);
		assertCommittedNotDeadLettered("k-dup-skip");
		assertThat(this.listeners.runs("k-dup-skip")).containsExactly(key + " first");
		assertThat(count("k-dup-skip", "skipped")).isEqualTo(1);
		assertThat(count("k-dup-skip", "replayed")).isZero();
	}

	@Test
	void flaggedDuplicateRunsTheListenerAgainWhichSeesItIsADuplicateAndTheStoredResultStays() throws Exception {
		String key = UUID.randomUUID().toString();
		publish("k-dup-flag", key);
		IdempotencyRecord first = awaitCompleted("k-dup-flag", key);
		publish("k-dup-flag", key);
		await().atMost(Duration.ofSeconds(30)).until(() -> this.listeners.runs("k-dup-flag").size() == 2);
		assertCommittedNotDeadLettered("k-dup-flag");
		assertThat(this.listeners.runs("k-dup-flag")).containsExactly(key + " first", key + " duplicate");
		assertThat(count("k-dup-flag", "flagged")).isEqualTo(1);
		IdempotencyRecord after = awaitCompleted("k-dup-flag", key);
		assertThat(after.fingerprint()).isEqualTo(first.fingerprint());
		assertThat(after.result()).isEqualTo(first.result());
	}

	private String publishTwice(String topic) throws Exception {
		String key = UUID.randomUUID().toString();
		publish(topic, key);
		awaitCompleted(topic, key);
		publish(topic, key);
		return key;
	}

	private void publish(String topic, String key) throws Exception {
		ProducerRecord<Object, Object> record = new ProducerRecord<>(topic, 0, null, "order-1");
		record.headers().add("Idempotency-Key", key.getBytes(StandardCharsets.UTF_8));
		this.kafka.send(record).get(10, TimeUnit.SECONDS);
	}

	/**
	 * Both records committed by the listener's group, none dead-lettered.
	 */
	private void assertCommittedNotDeadLettered(String topic) throws Exception {
		await().atMost(Duration.ofSeconds(30)).until(() -> {
			OffsetAndMetadata committed = KafkaTestUtils.getCurrentOffset(this.broker.getBrokersAsString(),
					topic + "-" + RUN, topic, 0);
			return committed != null && committed.offset() == 2;
		});
		Map<String, Object> properties = KafkaTestUtils.consumerProps(this.broker, "dlt-" + UUID.randomUUID(), false);
		properties.put("auto.offset.reset", "earliest");
		try (Consumer<String, String> consumer = new DefaultKafkaConsumerFactory<String, String>(properties)
			.createConsumer()) {
			this.broker.consumeFromAnEmbeddedTopic(consumer, topic + "-dlt");
			List<ConsumerRecord<String, String>> dead = new java.util.ArrayList<>();
			KafkaTestUtils.getRecords(consumer, Duration.ofMillis(500)).forEach(dead::add);
			assertThat(dead).isEmpty();
		}
	}

	private IdempotencyRecord awaitCompleted(String operation, String key) {
		InspectableIdempotencyStore records = (InspectableIdempotencyStore) this.store;
		RecordKey recordKey = RecordKey.of("kafka-dup-" + RUN, IdempotencyScopeResolver.GLOBAL, operation, key,
				this.store.maxKeyLength());
		await().atMost(Duration.ofSeconds(30))
			.until(() -> records.inspect(recordKey)
				.filter((record) -> record.state() == IdempotencyRecord.State.COMPLETED)
				.isPresent());
		return records.inspect(recordKey).orElseThrow();
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
		DefaultErrorHandler errorHandler(KafkaTemplate<Object, Object> template) {
			return new DefaultErrorHandler(new DeadLetterPublishingRecoverer(template), new FixedBackOff(10, 2));
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

		private String ship(String operation, String order) {
			IdempotencyContext context = IdempotencyContext.current().orElseThrow();
			List<String> runs = runs(operation);
			runs.add(context.getKey() + (context.isDuplicate() ? " duplicate" : " first"));
			return (context.isDuplicate() ? "already shipped " : "shipped ") + order + " #" + runs.size();
		}

		@KafkaListener(topics = "k-dup-replay", groupId = "k-dup-replay-${test.run}")
		@Idempotent(name = "k-dup-replay")
		public String replay(String order) {
			return ship("k-dup-replay", order);
		}

		@KafkaListener(topics = "k-dup-skip", groupId = "k-dup-skip-${test.run}")
		@Idempotent(name = "k-dup-skip", onDuplicate = DuplicateHandling.SKIP)
		public String skip(String order) {
			return ship("k-dup-skip", order);
		}

		@KafkaListener(topics = "k-dup-flag", groupId = "k-dup-flag-${test.run}")
		@Idempotent(name = "k-dup-flag", onDuplicate = DuplicateHandling.FLAG)
		public String flag(String order) {
			return ship("k-dup-flag", order);
		}

	}

}
