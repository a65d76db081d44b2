package io.github.idempotent.messaging.kafka;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.test.context.EmbeddedKafka;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.messaging.StoreOutageLogAssertions;
import io.github.idempotent.testsupport.FaultProxy;
import io.github.idempotent.testsupport.TestRedis;

import static org.awaitility.Awaitility.await;

/**
 * A Redis outage (the network to it stops delivering, through a {@link FaultProxy}) while
 * a {@code @KafkaListener} receives records, with the error handler the starter defines:
 * the records wait for the store, and the log says so in a line per ten seconds with a
 * count, not in a stack trace per retry.
 */
@ExtendWith(OutputCaptureExtension.class)
// Closed when the class ends, broker included: a cached context keeps its embedded broker
// running for the rest of the suite, and every one still open is shut down in the forked
// JVM's exit, which Surefire allows 30 s before it kills the fork.
@DirtiesContext
@EmbeddedKafka(partitions = 1, topics = { "k-outage-log" })
@SpringBootTest(classes = KafkaStoreOutageLogTests.App.class,
		properties = { "spring.kafka.bootstrap-servers=${spring.embedded.kafka.brokers}",
				"spring.kafka.consumer.auto-offset-reset=earliest", "idempotent.store.type=redis",
				"spring.data.redis.timeout=300ms", "idempotent.messaging.in-progress-back-off=100ms" })
class KafkaStoreOutageLogTests {

	static final String RUN = UUID.randomUUID().toString().substring(0, 8);

	static final AtomicInteger runs = new AtomicInteger();

	private static final FaultProxy proxy = FaultProxy.start(TestRedis.host(), TestRedis.port());

	@Autowired
	KafkaTemplate<Object, Object> kafka;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add("test.run", () -> RUN);
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", proxy::port);
	}

	@AfterAll
	static void stopProxy() {
		proxy.close();
	}

	@Test
	void anOutageIsLoggedOncePerIntervalWithACountNotOnceForEveryRetry(CapturedOutput output) throws Exception {
		int before = output.getOut().length();
		proxy.drop();
		try {
			for (int i = 0; i < 3; i++) {
				// Stamped with an Idempotency-Key header by the starter's producer
				// interceptor.
				this.kafka.send("k-outage-log", "payment-" + i).get(10, TimeUnit.SECONDS);
			}
			// A few seconds of outage: the first record is refused and retried many
			// times.
			Thread.sleep(6_000);
		}
		finally {
			proxy.passAndReset();
		}
		await().atMost(Duration.ofSeconds(30)).until(() -> runs.get() == 3);
		StoreOutageLogAssertions.assertOutageLoggedOncePerInterval(output.getOut().substring(before), 6);
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

		@KafkaListener(topics = "k-outage-log", groupId = "k-outage-log-${test.run}")
		@Idempotent(name = "k-outage-log")
		public void handle(String payment) {
			runs.incrementAndGet();
		}

	}

}
