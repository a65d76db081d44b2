package io.github.idempotent.core;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code Mono} methods on plain beans: nothing until subscription, an empty result is a
 * result, and what a cancelled subscriber leaves behind.
 */
class MonoIdempotencyTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotentAutoConfiguration.class,
				IdempotentAnnotationAutoConfiguration.class))
		.withPropertyValues("idempotent.default-scope=global", "idempotent.store.type=memory",
				"idempotent.retry-after=1s")
		.withBean(Payments.class);

	@Test
	void nothingRunsOrIsClaimedUntilSubscription() {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			Mono<String> unsubscribed = payments.pay("k-lazy", "A");
			assertThat(payments.runs()).isZero();
			// An unsubscribed Mono claims nothing: another call with the key runs.
			StepVerifier.create(payments.pay("k-lazy", "A")).expectNext("paid A #1").verifyComplete();
			StepVerifier.create(unsubscribed).expectNext("paid A #1").verifyComplete();
			assertThat(payments.runs()).isEqualTo(1);
		});
	}

	@Test
	void anEmptyMonoIsAResultAndReplaysAsEmpty() {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			StepVerifier.create(payments.nothing("k-empty")).verifyComplete();
			StepVerifier.create(payments.nothing("k-empty")).verifyComplete();
			assertThat(payments.runs()).isEqualTo(1);
		});
	}

	@Test
	void anErrorReleasesTheKeySoTheNextSubscriptionRunsAgain() {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			StepVerifier.create(payments.decline("k-error")).verifyError(IllegalStateException.class);
			StepVerifier.create(payments.decline("k-error")).verifyError(IllegalStateException.class);
			assertThat(payments.runs()).isEqualTo(2);
		});
	}

	@Test
	void aDuplicateWaitsForTheFirstWithoutBlockingAndGetsItsResult() {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			Disposable first = payments.gated("k-wait", "waitFor").subscribe();
			assertThat(payments.awaitEntered()).isTrue();
			Mono<String> duplicate = payments.gatedWaiting("k-wait");
			// Opened only after the duplicate has subscribed and is polling.
			Schedulers.parallel().schedule(payments::open, 300, TimeUnit.MILLISECONDS);
			StepVerifier.create(duplicate).expectNext("gated waitFor #1").verifyComplete();
			assertThat(payments.runs()).isEqualTo(1);
			first.dispose();
		});
	}

	@Test
	void aDuplicateWithoutWaitForIsRefusedAsInProgress() {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			Disposable first = payments.gated("k-busy", "x").subscribe();
			assertThat(payments.awaitEntered()).isTrue();
			StepVerifier.create(payments.gated("k-busy", "x")).verifyError(IdempotencyInProgressException.class);
			payments.open();
			first.dispose();
		});
	}

	@Test
	void aCancelledSubscriberLeavesTheStartedMethodRunningAndItsResultIsStored() {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			Disposable subscription = payments.gated("k-cancel", "cancelled").subscribe();
			assertThat(payments.awaitEntered()).isTrue();
			subscription.dispose();
			payments.open();
			// The retry is answered with the first run's result, once it is stored:
			// waitFor covers the moment between the gate opening and the completion.
			StepVerifier.create(payments.gatedWaiting("k-cancel")).expectNext("gated cancelled #1").verifyComplete();
			assertThat(payments.runs()).isEqualTo(1);
		});
	}

	static class Payments {

		final AtomicInteger runs = new AtomicInteger();

		final CountDownLatch entered = new CountDownLatch(1);

		final CountDownLatch gate = new CountDownLatch(1);

		public int runs() {
			return this.runs.get();
		}

		public boolean awaitEntered() throws InterruptedException {
			return this.entered.await(10, TimeUnit.SECONDS);
		}

		public void open() {
			this.gate.countDown();
		}

		@Idempotent(key = "#key")
		public Mono<String> pay(String key, String order) {
			return Mono.fromSupplier(() -> "paid " + order + " #" + this.runs.incrementAndGet());
		}

		@Idempotent(key = "#key")
		public Mono<String> nothing(String key) {
			return Mono.fromRunnable(this.runs::incrementAndGet);
		}

		@Idempotent(key = "#key")
		public Mono<String> decline(String key) {
			return Mono.defer(() -> {
				this.runs.incrementAndGet();
				return Mono.error(new IllegalStateException("declined"));
			});
		}

		@Idempotent(key = "#key", name = "gated", payload = "#key")
		public Mono<String> gated(String key, String label) {
			return Mono.fromCallable(() -> {
				int run = this.runs.incrementAndGet();
				this.entered.countDown();
				this.gate.await(10, TimeUnit.SECONDS);
				return "gated " + label + " #" + run;
			}).subscribeOn(Schedulers.boundedElastic());
		}

		@Idempotent(key = "#key", name = "gated", waitFor = "10s", payload = "#key")
		public Mono<String> gatedWaiting(String key) {
			return Mono.error(new AssertionError("the waiting duplicate must not run"));
		}

	}

}
