package io.github.idempotent.messaging.amqp;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.messaging.StoreOutageLogAssertions;
import io.github.idempotent.testsupport.FaultProxy;
import io.github.idempotent.testsupport.TestRedis;

import static org.awaitility.Awaitility.await;

/**
 * A Redis outage (the network to it stops delivering, through a {@link FaultProxy}) while
 * a {@code @RabbitListener} receives messages: every message is requeued until the store
 * is back, and the log says so in a line per ten seconds with a count, not in a stack
 * trace per redelivery.
 */
@ExtendWith(OutputCaptureExtension.class)
@SpringBootTest(classes = RabbitStoreOutageLogTests.App.class,
		properties = { "spring.rabbitmq.host=127.0.0.1", "spring.rabbitmq.port=5672", "idempotent.store.type=redis",
				"spring.data.redis.timeout=300ms", "idempotent.messaging.in-progress-back-off=100ms",
				"idempotent.messaging.stamp-outgoing=false", "spring.rabbitmq.listener.simple.prefetch=1" })
class RabbitStoreOutageLogTests {

	static final String RUN = UUID.randomUUID().toString().substring(0, 8);

	static final String QUEUE = "idempotent-outage-log-" + RUN;

	static final AtomicInteger runs = new AtomicInteger();

	private static final FaultProxy proxy = FaultProxy.start(TestRedis.host(), TestRedis.port());

	@Autowired
	RabbitTemplate rabbit;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add("test.queue", () -> QUEUE);
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", proxy::port);
	}

	@AfterAll
	static void cleanUp() {
		proxy.close();
		RabbitTestQueues.deleteWithDeadLetters(List.of(QUEUE));
	}

	@Test
	void anOutageIsLoggedOncePerIntervalWithACountNotOnceForEveryRedelivery(CapturedOutput output)
			throws InterruptedException {
		int before = output.getOut().length();
		proxy.drop();
		try {
			for (int i = 0; i < 3; i++) {
				this.rabbit.send("", QUEUE, RabbitTestQueues.text(UUID.randomUUID().toString(), "payment-" + i));
			}
			// A few seconds of outage: each message is refused and requeued many times.
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
		@Idempotent(name = "outage-log")
		public void handle(String payment) {
			runs.incrementAndGet();
		}

	}

}
