package io.github.idempotent.messaging.kafka;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.support.SendResult;
import org.springframework.kafka.test.EmbeddedKafkaBroker;
import org.springframework.kafka.test.context.EmbeddedKafka;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.annotation.Idempotent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The default key of a record without an {@code Idempotency-Key} header, when its topic
 * is deleted and created again within the TTL: the new incarnation's records start at
 * offset 0 again, and must run, not be taken for replays of the old ones.
 */
// Closed when the class ends, broker included: a cached context keeps its embedded broker
// running for the rest of the suite, and every one still open is shut down in the forked
// JVM's exit, which Surefire allows 30 s before it kills the fork.
@DirtiesContext
@EmbeddedKafka(partitions = 1)
@SpringBootTest(classes = KafkaRecreatedTopicTests.App.class,
		properties = { "spring.kafka.bootstrap-servers=${spring.embedded.kafka.brokers}",
				"spring.kafka.consumer.auto-offset-reset=earliest",
				"spring.kafka.consumer.properties.metadata.max.age.ms=500",
				"spring.kafka.consumer.properties.allow.auto.create.topics=false",
				"idempotent.messaging.stamp-outgoing=false" })
class KafkaRecreatedTopicTests {

	static final String TOPIC = "k-recreated-" + UUID.randomUUID().toString().substring(0, 8);

	static final List<String> runs = new CopyOnWriteArrayList<>();

	@Autowired
	KafkaTemplate<Object, Object> kafka;

	@Autowired
	EmbeddedKafkaBroker broker;

	private static Admin admin;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add("test.topic", () -> TOPIC);
	}

	@AfterAll
	static void closeAdmin() {
		if (admin != null) {
			admin.close();
		}
	}

	private Admin admin() {
		if (admin == null) {
			admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, this.broker.getBrokersAsString()));
		}
		return admin;
	}

	private void createTopic() throws Exception {
		// Right after a deletion the broker may still be removing the old one.
		await().atMost(Duration.ofSeconds(30)).ignoreExceptionsInstanceOf(TopicExistsException.class).until(() -> {
			try {
				admin().createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get(10, TimeUnit.SECONDS);
				return true;
			}
			catch (ExecutionException ex) {
				throw (ex.getCause() instanceof Exception cause) ? cause : ex;
			}
		});
	}

	private long send(String payment) throws Exception {
		SendResult<Object, Object> sent = this.kafka.send(TOPIC, payment).get(10, TimeUnit.SECONDS);
		return sent.getRecordMetadata().offset();
	}

	@Test
	void aRecordAtAnOffsetReusedByARecreatedTopicRunsInsteadOfBeingTakenForAReplay() throws Exception {
		createTopic();
		assertThat(send("payment-before")).isZero();
		await().atMost(Duration.ofSeconds(60)).until(() -> runs.contains("payment-before"));

		admin().deleteTopics(List.of(TOPIC)).all().get(10, TimeUnit.SECONDS);
		createTopic();
		assertThat(send("payment-after")).as("offset of the first record of the new topic").isZero();

		await().atMost(Duration.ofSeconds(60))
			.untilAsserted(() -> assertThat(runs).as("payments run").contains("payment-before", "payment-after"));
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		Listener listener() {
			return new Listener();
		}

	}

	static class Listener {

		@KafkaListener(topics = "${test.topic}", groupId = "${test.topic}")
		@Idempotent(name = "k-recreated")
		public void handle(String payment) {
			runs.add(payment);
		}

	}

}
