package io.github.idempotent.messaging.amqp;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
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
 * A duplicate of a {@code @RabbitListener} that returns a {@code CompletableFuture},
 * arriving while the first copy still runs, on a container that dead-letters what its
 * listener fails ({@code default-requeue-rejected=false}, as with a dead-letter queue):
 * the duplicate did not run, so it must come back later, not land on the dead-letter
 * queue.
 */
@SpringBootTest(classes = RabbitAsyncListenerInProgressTests.App.class,
		properties = { "spring.rabbitmq.host=127.0.0.1", "spring.rabbitmq.port=5672",
				"idempotent.messaging.in-progress-back-off=250ms", "idempotent.messaging.stamp-outgoing=false",
				"spring.rabbitmq.listener.simple.prefetch=10",
				"spring.rabbitmq.listener.simple.default-requeue-rejected=false" })
class RabbitAsyncListenerInProgressTests {

	static final String RUN = UUID.randomUUID().toString().substring(0, 8);

	static final String QUEUE = "idempotent-async-in-progress-" + RUN;

	static final AtomicInteger claims = new AtomicInteger();

	static final AtomicInteger runs = new AtomicInteger();

	static final CompletableFuture<Void> firstCopy = new CompletableFuture<>();

	@Autowired
	RabbitTemplate rabbit;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add("test.queue", () -> QUEUE);
	}

	@AfterAll
	static void deleteQueues() {
		RabbitTestQueues.deleteWithDeadLetters(List.of(QUEUE));
	}

	@Test
	void futureListenerDuplicateInProgressIsRequeuedAfterTheBackOffNotDeadLettered() {
		String id = UUID.randomUUID().toString();
		this.rabbit.send("", QUEUE, RabbitTestQueues.text(id, "payment-1"));
		await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() == 1);
		this.rabbit.send("", QUEUE, RabbitTestQueues.text(id, "payment-1"));
		// The copy found the first one in progress.
		await().atMost(Duration.ofSeconds(10)).until(() -> claims.get() >= 2);
		// Redelivered after the back-off, not at once: a handful of claims a second, not
		// thousands (the container requeues it to the head of the queue).
		int before = claims.get();
		Awaitility.await().pollDelay(Duration.ofSeconds(1)).until(() -> true);
		assertThat(claims.get() - before).as("claims in one second, with a back-off of 250 ms").isLessThan(15);
		firstCopy.complete(null);
		await().atMost(Duration.ofSeconds(20))
			.until(() -> this.rabbit.execute((channel) -> channel.messageCount(QUEUE)) == 0);
		assertThat(this.rabbit.receive(QUEUE + ".dlq")).as("the duplicate on the dead-letter queue").isNull();
		assertThat(runs.get()).isEqualTo(1);
	}

	static class CountingStore extends ForwardingIdempotencyStore {

		CountingStore() {
			super(new InMemoryIdempotencyStore());
		}

		@Override
		public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
			claims.incrementAndGet();
			return super.claim(key, fingerprint, lease);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		IdempotencyStore countingStore() {
			return new CountingStore();
		}

		@Bean
		Declarables queues() {
			return RabbitTestQueues.withDeadLetters(List.of(QUEUE));
		}

		@Bean
		Listener listener() {
			return new Listener();
		}

	}

	static class Listener {

		@RabbitListener(queues = "${test.queue}")
		@Idempotent(name = "async-in-progress")
		public CompletableFuture<Void> handle(String payment) {
			runs.incrementAndGet();
			return firstCopy;
		}

	}

}
