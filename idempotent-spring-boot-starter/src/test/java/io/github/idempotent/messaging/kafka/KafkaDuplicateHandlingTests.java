package io.github.idempotent.messaging.kafka;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

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
import org.springframework.messaging.handler.annotation.SendTo;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.util.backoff.FixedBackOff;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.annotation.DuplicateHandling;
import io.github.idempotent.messaging.AbstractDuplicateHandlingTests;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link AbstractDuplicateHandlingTests} on {@code @KafkaListener} methods, against
 * Spring Kafka's embedded broker and the test Redis: a duplicate is one record published
 * twice with the same {@code Idempotency-Key} header, settled when its offset is
 * committed. Every listener sends what it returns to a replies topic ({@code @SendTo}).
 */
// Closed when the class ends, broker included: a cached context keeps its embedded broker
// running for the rest of the suite, and every one still open is shut down in the forked
// JVM's exit, which Surefire allows 30 s before it kills the fork.
@DirtiesContext
@EmbeddedKafka(partitions = 1,
		topics = { "k-dup-replay", "k-dup-replay-dlt", "k-dup-replay-replies", "k-dup-skip", "k-dup-skip-dlt",
				"k-dup-skip-replies", "k-dup-flag", "k-dup-flag-dlt", "k-dup-flag-replies" })
@SpringBootTest(classes = KafkaDuplicateHandlingTests.App.class,
		properties = { "spring.kafka.bootstrap-servers=${spring.embedded.kafka.brokers}",
				"spring.kafka.consumer.auto-offset-reset=earliest", "idempotent.store.type=redis",
				"idempotent.messaging.in-progress-back-off=50ms" })
class KafkaDuplicateHandlingTests extends AbstractDuplicateHandlingTests {

	static final String RUN = UUID.randomUUID().toString().substring(0, 8);

	@Autowired
	KafkaTemplate<Object, Object> kafka;

	@Autowired
	EmbeddedKafkaBroker broker;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
		registry.add("idempotent.key-prefix", () -> "kafka-dup-" + RUN);
		registry.add("test.run", () -> RUN);
	}

	@Override
	protected String operation(String mode) {
		return "k-dup-" + mode;
	}

	@Override
	protected void deliver(String mode, String key) throws Exception {
		ProducerRecord<Object, Object> record = new ProducerRecord<>(operation(mode), 0, null, "order-1");
		record.headers().add("Idempotency-Key", key.getBytes(StandardCharsets.UTF_8));
		this.kafka.send(record).get(10, TimeUnit.SECONDS);
	}

	/**
	 * Both records committed by the listener's group, none dead-lettered.
	 */
	@Override
	protected void assertSettled(String mode) throws Exception {
		String topic = operation(mode);
		await().atMost(Duration.ofSeconds(30)).until(() -> {
			OffsetAndMetadata committed = KafkaTestUtils.getCurrentOffset(this.broker.getBrokersAsString(),
					topic + "-" + RUN, topic, 0);
			return committed != null && committed.offset() == 2;
		});
		assertThat(read(topic + "-dlt", 0)).isEmpty();
	}

	@Override
	protected void assertReplies(String mode, String... replies) {
		assertThat(read(operation(mode) + "-replies", replies.length)).containsExactly(replies);
	}

	/**
	 * The values on {@code topic} (one partition): at least {@code expected} of them, or
	 * what came within 10 s, and then whatever comes within another 500 ms. Read from the
	 * partition itself, which spares the join of a consumer group.
	 */
	private List<String> read(String topic, int expected) {
		Map<String, Object> properties = KafkaTestUtils.consumerProps(this.broker, "read-" + UUID.randomUUID(), false);
		List<String> values = new ArrayList<>();
		try (Consumer<String, String> consumer = new DefaultKafkaConsumerFactory<String, String>(properties)
			.createConsumer()) {
			List<TopicPartition> partition = List.of(new TopicPartition(topic, 0));
			consumer.assign(partition);
			consumer.seekToBeginning(partition);
			if (expected > 0) {
				KafkaTestUtils.getRecords(consumer, Duration.ofSeconds(10), expected)
					.forEach((record) -> values.add(record.value()));
			}
			KafkaTestUtils.getRecords(consumer, Duration.ofMillis(500)).forEach((record) -> values.add(record.value()));
		}
		return values;
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
		KafkaListeners listeners() {
			return new KafkaListeners();
		}

	}

	static class KafkaListeners extends Listeners {

		@KafkaListener(topics = "k-dup-replay", groupId = "k-dup-replay-${test.run}")
		@SendTo("k-dup-replay-replies")
		@Idempotent(name = "k-dup-replay")
		public String replay(String order) {
			return ship("k-dup-replay", order);
		}

		@KafkaListener(topics = "k-dup-skip", groupId = "k-dup-skip-${test.run}")
		@SendTo("k-dup-skip-replies")
		@Idempotent(name = "k-dup-skip", onDuplicate = DuplicateHandling.SKIP)
		public String skip(String order) {
			return ship("k-dup-skip", order);
		}

		@KafkaListener(topics = "k-dup-flag", groupId = "k-dup-flag-${test.run}")
		@SendTo("k-dup-flag-replies")
		@Idempotent(name = "k-dup-flag", onDuplicate = DuplicateHandling.FLAG)
		public String flag(String order) {
			return ship("k-dup-flag", order);
		}

	}

}
