package io.github.idempotent.messaging.kafka;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.admin.NewTopic;
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
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.ContainerProperties;
import org.springframework.kafka.test.EmbeddedKafkaBroker;
import org.springframework.kafka.test.context.EmbeddedKafka;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyPolicy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Records without a key header on a topic whose name is 240 characters (Kafka allows
 * 249): the key the starter derives from the record's position is longer than
 * {@code idempotent.max-key-length}, and must still guard the listener, not be refused.
 */
@EmbeddedKafka(partitions = 1)
@SpringBootTest(classes = KafkaLongTopicNameTests.App.class,
		properties = { "spring.kafka.bootstrap-servers=${spring.embedded.kafka.brokers}",
				"spring.kafka.consumer.auto-offset-reset=earliest", "idempotent.store.type=memory",
				"idempotent.messaging.stamp-outgoing=false" })
class KafkaLongTopicNameTests {

	static final String TOPIC = longName("k-long-" + UUID.randomUUID().toString().substring(0, 8) + "-", 240);

	static final List<String> runs = new CopyOnWriteArrayList<>();

	static final AtomicInteger replays = new AtomicInteger();

	@Autowired
	KafkaTemplate<Object, Object> kafka;

	@Autowired
	KafkaListenerEndpointRegistry listeners;

	@Autowired
	EmbeddedKafkaBroker broker;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add("test.topic", () -> TOPIC);
		registry.add("test.group", () -> TOPIC.substring(0, 15));
	}

	private static String longName(String start, int length) {
		return start + "x".repeat(length - start.length());
	}

	@Test
	void eachRecordRunsOnceAndARedeliveryIsReplayed() throws Exception {
		assertThat(TOPIC).hasSize(240);
		this.broker.addTopics(new NewTopic(TOPIC, 1, (short) 1));
		// The first instance never commits (manual acknowledgement that never comes);
		// once it stops, the second instance of the group gets the records again.
		this.listeners.getListenerContainer("k-long-crashing").start();
		this.kafka.send(TOPIC, "payment-1").get(10, TimeUnit.SECONDS);
		this.kafka.send(TOPIC, "payment-2").get(10, TimeUnit.SECONDS);
		await().atMost(Duration.ofSeconds(60))
			.untilAsserted(() -> assertThat(runs).containsExactlyInAnyOrder("payment-1", "payment-2"));
		this.listeners.getListenerContainer("k-long-crashing").stop();
		this.listeners.getListenerContainer("k-long-survivor").start();
		try {
			await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(replays).hasValue(2));
			assertThat(runs).as("each record run once").containsExactlyInAnyOrder("payment-1", "payment-2");
		}
		finally {
			this.listeners.getListenerContainer("k-long-survivor").stop();
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

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
					replays.incrementAndGet();
				}

			};
		}

		@Bean
		Listeners listeners() {
			return new Listeners();
		}

	}

	static class Listeners {

		@KafkaListener(id = "k-long-crashing", topics = "${test.topic}", groupId = "${test.group}",
				containerFactory = "manualAckFactory", autoStartup = "false")
		@Idempotent(name = "k-long")
		public void crashing(String payment) {
			runs.add(payment);
		}

		@KafkaListener(id = "k-long-survivor", topics = "${test.topic}", groupId = "${test.group}",
				autoStartup = "false")
		@Idempotent(name = "k-long")
		public void survivor(String payment) {
			runs.add(payment);
		}

	}

}
