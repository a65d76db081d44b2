package io.github.idempotent.messaging.kafka;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.test.context.EmbeddedKafka;
import org.springframework.test.annotation.DirtiesContext;
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
 * Review: a store outage under {@code failure-mode=closed} on a {@code @KafkaListener}
 * with the error handler the starter defines (the application has none). The record must
 * not be committed without running: it should run once the store is back.
 */
// Closed when the class ends, broker included: a cached context keeps its embedded broker
// running for the rest of the suite, and every one still open is shut down in the forked
// JVM's exit, which Surefire allows 30 s before it kills the fork.
@DirtiesContext
@EmbeddedKafka(partitions = 1, topics = { "k-outage" })
@SpringBootTest(classes = KafkaStoreOutageTests.App.class,
		properties = { "spring.kafka.bootstrap-servers=${spring.embedded.kafka.brokers}",
				"spring.kafka.consumer.auto-offset-reset=earliest", "idempotent.messaging.in-progress-back-off=50ms" })
class KafkaStoreOutageTests {

	static final String RUN = UUID.randomUUID().toString().substring(0, 8);

	static final AtomicInteger sideEffects = new AtomicInteger();

	static final AtomicInteger claims = new AtomicInteger();

	static volatile boolean down;

	@Autowired
	KafkaTemplate<Object, Object> kafka;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add("test.run", () -> RUN);
	}

	@Test
	void recordArrivingDuringAStoreOutageRunsOnceTheStoreIsBackInsteadOfBeingSkipped() throws Exception {
		down = true;
		try {
			ProducerRecord<Object, Object> record = new ProducerRecord<>("k-outage", 0, null, "payment-1");
			record.headers().add("Idempotency-Key", UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8));
			this.kafka.send(record).get(10, TimeUnit.SECONDS);
			// An outage of a few seconds.
			await().atMost(Duration.ofSeconds(30)).until(() -> claims.get() >= 1);
			Thread.sleep(5_000);
		}
		finally {
			down = false;
		}
		int refused = claims.get();
		Thread.sleep(5_000);
		assertThat(sideEffects.get())
			.as("runs once the store is back (claims refused during the outage: %d, claims after: %d)", refused,
					claims.get() - refused)
			.isEqualTo(1);
	}

	static class FlakyStore extends ForwardingIdempotencyStore {

		FlakyStore() {
			super(new InMemoryIdempotencyStore());
		}

		@Override
		public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
			claims.incrementAndGet();
			if (down) {
				throw new DataAccessResourceFailureException("store down");
			}
			return super.claim(key, fingerprint, lease);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		IdempotencyStore flakyStore() {
			return new FlakyStore();
		}

		@Bean
		Listener listener() {
			return new Listener();
		}

	}

	static class Listener {

		@KafkaListener(topics = "k-outage", groupId = "k-outage-${test.run}")
		@Idempotent(name = "k-outage")
		public void outage(String payment) {
			sideEffects.incrementAndGet();
		}

	}

}
