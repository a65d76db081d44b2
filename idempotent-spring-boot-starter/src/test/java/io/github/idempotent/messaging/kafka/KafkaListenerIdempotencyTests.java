package io.github.idempotent.messaging.kafka;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.ConcurrentKafkaListenerContainerFactoryConfigurer;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.ConcurrentKafkaListenerContainerFactory;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.ContainerProperties;
import org.springframework.kafka.listener.DeadLetterPublishingRecoverer;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.support.KafkaHeaders;
import org.springframework.kafka.test.EmbeddedKafkaBroker;
import org.springframework.kafka.test.context.EmbeddedKafka;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.kafka.test.utils.ContainerTestUtils;
import org.springframework.kafka.test.utils.KafkaTestUtils;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.util.backoff.FixedBackOff;

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
 * {@code @Idempotent} on {@code @KafkaListener} methods against Spring Kafka's embedded
 * broker (a real Kafka in the test JVM) and the test Redis. The application's own
 * {@code DefaultErrorHandler} publishes to dead-letter topics; the starter adds the
 * classification of the protocol's refusals to it.
 */
// Closed when the class ends, broker included: a cached context keeps its embedded broker
// running for the rest of the suite, and every one still open is shut down in the forked
// JVM's exit, which Surefire allows 30 s before it kills the fork.
@DirtiesContext
@EmbeddedKafka(partitions = 2,
		topics = { "k-twenty", "k-crash", "k-race", "k-race-dlt", "k-mismatch", "k-mismatch-dlt" })
@SpringBootTest(classes = KafkaListenerIdempotencyTests.App.class,
		properties = { "spring.kafka.bootstrap-servers=${spring.embedded.kafka.brokers}",
				"spring.kafka.consumer.auto-offset-reset=earliest", "idempotent.store.type=redis",
				"idempotent.messaging.in-progress-back-off=50ms" })
class KafkaListenerIdempotencyTests {

	static final String RUN = UUID.randomUUID().toString().substring(0, 8);

	static final Map<String, AtomicInteger> sideEffects = new ConcurrentHashMap<>();

	static final Map<String, AtomicInteger> replays = new ConcurrentHashMap<>();

	static final Map<String, AtomicInteger> inProgress = new ConcurrentHashMap<>();

	static final Map<String, AtomicInteger> reused = new ConcurrentHashMap<>();

	static final CountDownLatch raceInProgressSeen = new CountDownLatch(1);

	@Autowired
	KafkaTemplate<Object, Object> kafka;

	@Autowired
	KafkaListenerEndpointRegistry listeners;

	@Autowired
	EmbeddedKafkaBroker broker;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
		registry.add("idempotent.key-prefix", () -> "kafka-test-" + RUN);
		registry.add("test.run", () -> RUN);
	}

	private static int count(Map<String, AtomicInteger> counts, String name) {
		return counts.computeIfAbsent(name, (k) -> new AtomicInteger()).get();
	}

	private void send(String topic, int partition, String key, String value) throws Exception {
		ProducerRecord<Object, Object> record = new ProducerRecord<>(topic, partition, null, value);
		if (key != null) {
			record.headers().add("Idempotency-Key", key.getBytes(StandardCharsets.UTF_8));
		}
		this.kafka.send(record).get(10, TimeUnit.SECONDS);
	}

	@Test
	void sameMessagePublishedTwentyTimesHasOneSideEffect() throws Exception {
		String key = UUID.randomUUID().toString();
		for (int i = 0; i < 20; i++) {
			send("k-twenty", i % 2, key, "payment-1");
		}
		await().atMost(Duration.ofSeconds(30)).until(() -> count(replays, "k-twenty") == 19);
		assertThat(count(sideEffects, "k-twenty")).isEqualTo(1);
	}

	@Test
	void consumerKilledBeforeItsCommitHasOneSideEffectWhenASecondInstanceGetsTheRecordAgain() throws Exception {
		// No key header: the record is keyed by its topic, partition, offset and
		// timestamp, which is
		// what a redelivery of the same record has. The first instance never commits
		// (manual acknowledgement that never comes); once it stops, the second instance
		// of the group starts at the last committed offset and gets the record again.
		this.listeners.getListenerContainer("k-crashing").start();
		send("k-crash", 0, null, "payment-2");
		await().atMost(Duration.ofSeconds(30)).until(() -> count(sideEffects, "k-crash") == 1);
		this.listeners.getListenerContainer("k-crashing").stop();
		this.listeners.getListenerContainer("k-survivor").start();
		try {
			await().atMost(Duration.ofSeconds(30)).until(() -> count(replays, "k-crash") == 1);
			assertThat(count(sideEffects, "k-crash")).isEqualTo(1);
		}
		finally {
			this.listeners.getListenerContainer("k-survivor").stop();
		}
	}

	@Test
	void twoConsumersRacingOnDuplicatesHaveOneSideEffectAndTheInProgressOneIsRetriedNotDeadLettered() throws Exception {
		ContainerTestUtils.waitForAssignment(this.listeners.getListenerContainer("k-race"), 2);
		// Each consumer with a partition of its own: two partitions on one consumer would
		// process the duplicates one after the other, and no race would happen.
		ConcurrentMessageListenerContainer<?, ?> race = (ConcurrentMessageListenerContainer<?, ?>) this.listeners
			.getListenerContainer("k-race");
		await().atMost(Duration.ofSeconds(30))
			.until(() -> race.getContainers()
				.stream()
				.allMatch(
						(child) -> child.getAssignedPartitions() != null && child.getAssignedPartitions().size() == 1));
		String key = UUID.randomUUID().toString();
		// One duplicate on each partition: the two consumers of the group get one each.
		for (int i = 0; i < 6; i++) {
			send("k-race", i % 2, key, "payment-3");
		}
		await().atMost(Duration.ofSeconds(30)).until(() -> count(replays, "k-race") == 5);
		assertThat(count(sideEffects, "k-race")).isEqualTo(1);
		assertThat(count(inProgress, "k-race")).isPositive();
		assertThat(deadLetters("k-race-dlt")).isEmpty();
	}

	@Test
	void keyReusedWithAnotherPayloadGoesToTheDeadLetterTopicAtOnceWithTheReason() throws Exception {
		String key = UUID.randomUUID().toString();
		send("k-mismatch", 0, key, "payment-4");
		await().atMost(Duration.ofSeconds(30)).until(() -> count(sideEffects, "k-mismatch") == 1);
		send("k-mismatch", 0, key, "payment-4-changed");
		ConsumerRecord<String, String> record;
		// Closed: a consumer left open retries the broker, gone with this class, for
		// ever.
		try (Consumer<String, String> consumer = dlqConsumer("k-mismatch-dlt")) {
			record = KafkaTestUtils.getRecords(consumer, Duration.ofSeconds(30), 1).iterator().next();
		}
		assertThat(record.value()).isEqualTo("payment-4-changed");
		Header reason = record.headers().lastHeader(KafkaHeaders.DLT_EXCEPTION_MESSAGE);
		assertThat(new String(reason.value(), StandardCharsets.UTF_8))
			.contains("was already used with a different payload");
		// Not retried first: refused once.
		assertThat(count(reused, "k-mismatch")).isEqualTo(1);
		assertThat(count(sideEffects, "k-mismatch")).isEqualTo(1);
	}

	private Consumer<String, String> dlqConsumer(String topic) {
		Map<String, Object> properties = KafkaTestUtils.consumerProps(this.broker, "dlt-" + UUID.randomUUID(), false);
		properties.put("auto.offset.reset", "earliest");
		Consumer<String, String> consumer = new DefaultKafkaConsumerFactory<String, String>(properties)
			.createConsumer();
		this.broker.consumeFromAnEmbeddedTopic(consumer, topic);
		return consumer;
	}

	private java.util.List<ConsumerRecord<String, String>> deadLetters(String topic) {
		try (Consumer<String, String> consumer = dlqConsumer(topic)) {
			java.util.List<ConsumerRecord<String, String>> all = new java.util.ArrayList<>();
			KafkaTestUtils.getRecords(consumer, Duration.ofMillis(500)).forEach(all::add);
			return all;
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		/**
		 * The application's own handler: dead-letter topics, few quick retries. The
		 * starter teaches it what not to retry and what to retry until it passes.
		 */
		@Bean
		DefaultErrorHandler errorHandler(KafkaTemplate<Object, Object> template) {
			return new DefaultErrorHandler(new DeadLetterPublishingRecoverer(template), new FixedBackOff(10, 2));
		}

		@Bean
		ConcurrentKafkaListenerContainerFactory<Object, Object> manualAckFactory(
				ConcurrentKafkaListenerContainerFactoryConfigurer configurer,
				ConsumerFactory<Object, Object> consumerFactory) {
			ConcurrentKafkaListenerContainerFactory<Object, Object> factory = new ConcurrentKafkaListenerContainerFactory<>();
			configurer.configure(factory, consumerFactory);
			factory.getContainerProperties().setAckMode(ContainerProperties.AckMode.MANUAL);
			return factory;
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
						if ("k-race".equals(policy.name())) {
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

		@KafkaListener(topics = "k-twenty", groupId = "k-twenty-${test.run}", concurrency = "2")
		@Idempotent(name = "k-twenty")
		public void twenty(String payment) {
			sideEffect("k-twenty");
		}

		@KafkaListener(id = "k-crashing", topics = "k-crash", groupId = "k-crash-${test.run}",
				containerFactory = "manualAckFactory", autoStartup = "false")
		@Idempotent(name = "k-crash")
		public void crashing(String payment) {
			sideEffect("k-crash");
		}

		@KafkaListener(id = "k-survivor", topics = "k-crash", groupId = "k-crash-${test.run}", autoStartup = "false")
		@Idempotent(name = "k-crash")
		public void survivor(String payment) {
			sideEffect("k-crash");
		}

		@KafkaListener(id = "k-race", topics = "k-race", groupId = "k-race-${test.run}", concurrency = "2")
		@Idempotent(name = "k-race")
		public void race(String payment) throws InterruptedException {
			sideEffect("k-race");
			raceInProgressSeen.await(10, TimeUnit.SECONDS);
		}

		@KafkaListener(topics = "k-mismatch", groupId = "k-mismatch-${test.run}")
		@Idempotent(name = "k-mismatch")
		public void mismatch(String payment) {
			sideEffect("k-mismatch");
		}

	}

}
