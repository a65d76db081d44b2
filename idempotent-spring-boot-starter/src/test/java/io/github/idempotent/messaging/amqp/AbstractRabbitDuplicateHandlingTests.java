package io.github.idempotent.messaging.amqp;

import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;

import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.idempotent.annotation.DuplicateHandling;
import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.messaging.AbstractDuplicateHandlingTests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link AbstractDuplicateHandlingTests} on {@code @RabbitListener} methods, against the
 * RabbitMQ at 127.0.0.1:5672 and a real store (a subclass per store): a duplicate is one
 * message delivered twice with the same message id. Every message asks for a reply, which
 * shows what the second delivery answered.
 */
@SpringBootTest(classes = AbstractRabbitDuplicateHandlingTests.App.class,
		properties = { "spring.rabbitmq.host=127.0.0.1", "spring.rabbitmq.port=5672",
				"idempotent.messaging.in-progress-back-off=50ms", "idempotent.messaging.stamp-outgoing=false",
				"spring.rabbitmq.listener.simple.prefetch=1" })
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractRabbitDuplicateHandlingTests extends AbstractDuplicateHandlingTests {

	static final List<String> MODES = List.of("replay", "skip", "flag");

	@Autowired
	RabbitTemplate rabbit;

	@Autowired
	RabbitListenerEndpointRegistry containers;

	@Value("${test.run}")
	String run;

	@AfterAll
	void deleteQueues() {
		List<String> queues = MODES.stream().map(this::queue).toList();
		RabbitTestQueues.deleteWithDeadLetters(queues);
		RabbitTestQueues.deleteWithDeadLetters(queues.stream().map((queue) -> queue + ".replies").toList());
	}

	@Override
	protected String operation(String mode) {
		return "dup-" + mode;
	}

	@Override
	protected void deliver(String mode, String key) {
		Message message = RabbitTestQueues.text(key, "order-1");
		message.getMessageProperties().setReplyTo(queue(mode) + ".replies");
		this.rabbit.send("", queue(mode), message);
	}

	/**
	 * Acknowledged, and so neither redelivered nor dead-lettered: once the listener's
	 * consumer has stopped, which would return an unacknowledged message to the queue,
	 * the queue and its dead-letter queue are empty.
	 */
	@Override
	protected void assertSettled(String mode) {
		this.containers.getListenerContainer(operation(mode)).stop();
		await().atMost(Duration.ofSeconds(10))
			.until(() -> this.rabbit.execute((channel) -> channel.messageCount(queue(mode))) == 0);
		assertThat(this.rabbit.receive(queue(mode) + ".dlq")).isNull();
	}

	@Override
	protected void assertReplies(String mode, String... replies) {
		for (String expected : replies) {
			Message reply = this.rabbit.receive(queue(mode) + ".replies", 10_000);
			assertThat(reply).as("a reply on " + mode).isNotNull();
			assertThat(this.rabbit.getMessageConverter().fromMessage(reply)).isEqualTo(expected);
		}
		assertThat(this.rabbit.receive(queue(mode) + ".replies", 200)).as("another reply on " + mode).isNull();
	}

	String queue(String mode) {
		return "idempotent-dup-" + mode + "-" + this.run;
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		Declarables queues(@Value("${test.run}") String run) {
			List<String> queues = MODES.stream().map((mode) -> "idempotent-dup-" + mode + "-" + run).toList();
			Stream<Queue> replies = queues.stream().map((queue) -> QueueBuilder.nonDurable(queue + ".replies").build());
			return new Declarables(
					Stream.concat(RabbitTestQueues.withDeadLetters(queues).getDeclarables().stream(), replies)
						.toList());
		}

		@Bean
		MeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

		@Bean
		RabbitListeners listeners() {
			return new RabbitListeners();
		}

	}

	static class RabbitListeners extends Listeners {

		@RabbitListener(id = "dup-replay", queues = "idempotent-dup-replay-${test.run}")
		@Idempotent(name = "dup-replay")
		public String replay(String order) {
			return ship("dup-replay", order);
		}

		@RabbitListener(id = "dup-skip", queues = "idempotent-dup-skip-${test.run}")
		@Idempotent(name = "dup-skip", onDuplicate = DuplicateHandling.SKIP)
		public String skip(String order) {
			return ship("dup-skip", order);
		}

		@RabbitListener(id = "dup-flag", queues = "idempotent-dup-flag-${test.run}")
		@Idempotent(name = "dup-flag", onDuplicate = DuplicateHandling.FLAG)
		public String flag(String order) {
			return ship("dup-flag", order);
		}

	}

}
