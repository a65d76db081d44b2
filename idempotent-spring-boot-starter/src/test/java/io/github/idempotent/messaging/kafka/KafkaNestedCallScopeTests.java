package io.github.idempotent.messaging.kafka;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.test.context.EmbeddedKafka;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.util.backoff.FixedBackOff;

import io.github.idempotent.core.IdempotencyKeyException;
import io.github.idempotent.core.IdempotencyScopeException;
import io.github.idempotent.messaging.NestedPayments;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A service method that a {@code @KafkaListener} calls, with Spring Security on the class
 * path and no caller on the consumer's thread, against Spring Kafka's embedded broker:
 * the record's key and the global scope are the listener method's alone. A nested call
 * that names no scope fails rather than share one record among users; one that names no
 * key is refused rather than keyed by the record. The record goes to the error handler's
 * recoverer and the service never runs.
 */
// Closed when the class ends, broker included (see KafkaListenerIdempotencyTests).
@DirtiesContext
@EmbeddedKafka(partitions = 1, topics = { "k-nested-pay", "k-nested-ship" })
@SpringBootTest(classes = KafkaNestedCallScopeTests.App.class,
		properties = { "spring.kafka.bootstrap-servers=${spring.embedded.kafka.brokers}",
				"spring.kafka.consumer.auto-offset-reset=earliest", "idempotent.store.type=memory",
				"idempotent.messaging.stamp-outgoing=false" })
class KafkaNestedCallScopeTests {

	static final List<Object> recovered = new CopyOnWriteArrayList<>();

	@Autowired
	KafkaTemplate<Object, Object> kafka;

	@Autowired
	NestedPayments payments;

	@Test
	void aNestedCallWithoutScopeFailsRatherThanShareOneRecordAmongUsers() throws Exception {
		// Equal amounts: under one scope, Bob would be handed Alice's receipt.
		this.kafka.send("k-nested-pay", "alice:r1:10").get(10, TimeUnit.SECONDS);
		this.kafka.send("k-nested-pay", "bob:r1:10").get(10, TimeUnit.SECONDS);
		await().atMost(Duration.ofSeconds(30))
			.until(() -> recovered.containsAll(List.of("alice:r1:10", "bob:r1:10")) || this.payments.runs("pay") > 0);
		assertThat(this.payments.runs("pay")).isZero();
		assertThat(this.payments.failures("pay")).hasSize(2)
			.allSatisfy((failure) -> assertThat(failure).isInstanceOf(IdempotencyScopeException.class));
	}

	@Test
	void aNestedCallWithoutKeyIsRefusedRatherThanKeyedByTheRecord() throws Exception {
		// One record, the service called for two users: keyed by the record, the second
		// call would be handed the first one's result.
		this.kafka.send("k-nested-ship", "alice:s1:10,bob:s1:10").get(10, TimeUnit.SECONDS);
		await().atMost(Duration.ofSeconds(30))
			.until(() -> recovered.contains("alice:s1:10,bob:s1:10") || this.payments.runs("ship") > 0);
		assertThat(this.payments.runs("ship")).isZero();
		assertThat(this.payments.failures("ship")).singleElement()
			.isInstanceOf(IdempotencyKeyException.class)
			.extracting(Throwable::getMessage)
			.asString()
			.startsWith("Idempotency key is required");
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		/** Not retried: each failed record straight to the recoverer. */
		@Bean
		DefaultErrorHandler errorHandler() {
			return new DefaultErrorHandler((record, ex) -> recovered.add(record.value()), new FixedBackOff(0, 0));
		}

		@Bean
		NestedPayments payments() {
			return new NestedPayments();
		}

		@Bean
		Listeners listeners(NestedPayments payments) {
			return new Listeners(payments);
		}

	}

	static class Listeners {

		private final NestedPayments payments;

		Listeners(NestedPayments payments) {
			this.payments = payments;
		}

		@KafkaListener(topics = "k-nested-pay", groupId = "k-nested-pay")
		public void pay(String commands) {
			NestedPayments.handle(this.payments, "pay", commands);
		}

		@KafkaListener(topics = "k-nested-ship", groupId = "k-nested-ship")
		public void ship(String commands) {
			NestedPayments.handle(this.payments, "ship", commands);
		}

	}

}
