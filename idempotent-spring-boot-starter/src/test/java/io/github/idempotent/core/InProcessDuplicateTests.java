package io.github.idempotent.core;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.test.util.AopTestUtils;
import org.springframework.transaction.event.TransactionalEventListener;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Duplicates that nothing redelivers: an event delivered twice to an {@code @Async}
 * {@code @EventListener}, whose second delivery arrives while the first still runs. Its
 * caller cannot retry, so it waits for the first call's result and replays it; one that
 * is still refused after its wait is dropped with a warning, never thrown into the async
 * uncaught-exception handler. Against the Redis store.
 */
@ExtendWith(OutputCaptureExtension.class)
class InProcessDuplicateTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, DataRedisAutoConfiguration.class,
				IdempotentAutoConfiguration.class, IdempotentAnnotationAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=" + TestRedis.host(), "spring.data.redis.port=" + TestRedis.port(),
				"idempotent.default-scope=global", "idempotent.store.type=redis")
		.withUserConfiguration(ShippingConfiguration.class);

	@Test
	void aDuplicateDeliveryWaitsForTheFirstOneAndReplaysIt(CapturedOutput output) {
		this.runner.run((context) -> {
			// The proxy's fields are not the bean's.
			Shipping shipping = AopTestUtils.getUltimateTargetObject(context.getBean(Shipping.class));
			Outcomes outcomes = context.getBean(Outcomes.class);
			ApplicationEventPublisher events = context;
			Shipped event = new Shipped(UUID.randomUUID().toString());
			events.publishEvent(event);
			assertThat(shipping.entered.await(30, TimeUnit.SECONDS)).isTrue();
			events.publishEvent(event);
			// The second delivery has claimed and found the first in progress.
			await().atMost(Duration.ofSeconds(30)).until(() -> outcomes.claims.get() >= 2);
			shipping.release.countDown();
			await().atMost(Duration.ofSeconds(30))
				.until(() -> outcomes.executed.get() == 1 && outcomes.replayed.get() + outcomes.rejected.get() >= 1);
			assertThat(outcomes.replayed).hasValue(1);
			assertThat(outcomes.rejected).hasValue(0);
			assertThat(shipping.runs).hasValue(1);
		});
		assertThat(output.getAll()).as("nothing reached the async uncaught-exception handler")
			.doesNotContain("AsyncUncaughtExceptionHandler")
			.doesNotContain("IdempotencyInProgressException");
	}

	@Test
	void aDuplicateStillInProgressAfterItsWaitIsDroppedWithOneWarning(CapturedOutput output) {
		this.runner.withPropertyValues("idempotent.in-process-wait-for=50ms").run((context) -> {
			Shipping shipping = AopTestUtils.getUltimateTargetObject(context.getBean(Shipping.class));
			Outcomes outcomes = context.getBean(Outcomes.class);
			String id = UUID.randomUUID().toString();
			context.publishEvent(new Shipped(id));
			assertThat(shipping.entered.await(30, TimeUnit.SECONDS)).isTrue();
			context.publishEvent(new Shipped(id));
			await().atMost(Duration.ofSeconds(30)).until(() -> outcomes.rejected.get() == 1);
			shipping.release.countDown();
			await().atMost(Duration.ofSeconds(30)).until(() -> outcomes.executed.get() == 1);
			assertThat(shipping.runs).hasValue(1);
			assertThat(output.getAll()).contains("WARN")
				.contains("Dropped a duplicate call of " + Shipping.class.getName() + "#ship with key '" + id + "'")
				.contains("nothing will deliver this call again")
				.contains("idempotent.in-process-wait-for");
		});
		assertThat(output.getAll()).as("nothing reached the async uncaught-exception handler")
			.doesNotContain("AsyncUncaughtExceptionHandler")
			.doesNotContain("IdempotencyInProgressException");
	}

	@Test
	void methodsThatNobodyRetriesWaitOneLeaseByDefaultAndAnExplicitWaitForWins() {
		this.runner.withPropertyValues("idempotent.lease=12s").run((context) -> {
			IdempotencyExecutor operations = context.getBean(IdempotencyExecutor.class);
			assertThat(waitFor(operations, Shipping.class, "ship")).isEqualTo(Duration.ofSeconds(12));
			assertThat(waitFor(operations, Listeners.class, "afterCommit")).isEqualTo(Duration.ofSeconds(12));
			assertThat(waitFor(operations, Listeners.class, "scheduled")).isEqualTo(Duration.ofSeconds(12));
			assertThat(waitFor(operations, Listeners.class, "explicit")).isEqualTo(Duration.ofSeconds(2));
			assertThat(waitFor(operations, Listeners.class, "plain")).isEqualTo(Duration.ZERO);
		});
		this.runner.withPropertyValues("idempotent.in-process-wait-for=5s").run((context) -> {
			IdempotencyExecutor operations = context.getBean(IdempotencyExecutor.class);
			assertThat(waitFor(operations, Listeners.class, "afterCommit")).isEqualTo(Duration.ofSeconds(5));
			assertThat(waitFor(operations, Listeners.class, "plain")).isEqualTo(Duration.ZERO);
		});
	}

	private static Duration waitFor(IdempotencyExecutor operations, Class<?> type, String method)
			throws NoSuchMethodException {
		Class<?> parameter = type.equals(Shipping.class) ? Shipped.class : String.class;
		return operations.operation(type.getMethod(method, parameter), type).policy().waitFor();
	}

	record Shipped(String id) {
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAsync
	static class ShippingConfiguration {

		@Bean
		Shipping shipping() {
			return new Shipping();
		}

		@Bean
		Listeners listeners() {
			return new Listeners();
		}

		@Bean
		Outcomes outcomes() {
			return new Outcomes();
		}

	}

	static class Shipping {

		final CountDownLatch entered = new CountDownLatch(1);

		final CountDownLatch release = new CountDownLatch(1);

		final AtomicInteger runs = new AtomicInteger();

		@Async
		@EventListener
		@Idempotent(key = "#event.id")
		public void ship(Shipped event) throws InterruptedException {
			this.runs.incrementAndGet();
			this.entered.countDown();
			this.release.await(60, TimeUnit.SECONDS);
		}

	}

	static class Listeners {

		@TransactionalEventListener
		@Idempotent(key = "#id")
		public void afterCommit(String id) {
		}

		@Scheduled(fixedDelay = 60_000, initialDelay = 3_600_000)
		@Idempotent(key = "#id")
		public void scheduled(String id) {
		}

		@Async
		@Idempotent(key = "#id", waitFor = "2s")
		public void explicit(String id) {
		}

		@Idempotent(key = "#id")
		public void plain(String id) {
		}

	}

	static class Outcomes implements IdempotencyObserver {

		final AtomicInteger claims = new AtomicInteger();

		final AtomicInteger executed = new AtomicInteger();

		final AtomicInteger replayed = new AtomicInteger();

		final AtomicInteger rejected = new AtomicInteger();

		@Override
		public void step(IdempotencyPolicy policy, String key, Step step) {
			if (step == Step.CLAIMED) {
				this.claims.incrementAndGet();
			}
		}

		@Override
		public void executed(IdempotencyPolicy policy, String key) {
			this.executed.incrementAndGet();
		}

		@Override
		public void replayed(IdempotencyPolicy policy, String key) {
			this.replayed.incrementAndGet();
		}

		@Override
		public void rejected(IdempotencyPolicy policy, String key, IdempotencyException reason) {
			this.rejected.incrementAndGet();
		}

	}

}
