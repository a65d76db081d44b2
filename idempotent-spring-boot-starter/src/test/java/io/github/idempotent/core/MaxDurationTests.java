package io.github.idempotent.core;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code maxDuration} on real beans against the Redis store: a call that hangs (a
 * blocking method, a future or a {@code Mono} that never completes) holds its key no
 * longer than its maxDuration plus one lease; then a retry runs the method, and the hung
 * call's late outcome goes to its own caller without overwriting the retry's result.
 */
@ExtendWith(OutputCaptureExtension.class)
class MaxDurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, DataRedisAutoConfiguration.class,
				IdempotentAutoConfiguration.class, IdempotentAnnotationAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=" + TestRedis.host(), "spring.data.redis.port=" + TestRedis.port(),
				"idempotent.default-scope=global", "idempotent.store.type=redis")
		.withUserConfiguration(HangingConfiguration.class);

	@Test
	void aBlockingCallPastItsMaxDurationFreesItsKeyAndItsLateResultIsNotStored(CapturedOutput output) {
		this.runner.run((context) -> {
			Hanging hanging = context.getBean(Hanging.class);
			String key = "blocking-" + UUID.randomUUID();
			CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> hanging.blocking(key));
			assertThat(hanging.entered().await(10, TimeUnit.SECONDS)).isTrue();
			assertThat(retryUntilRun(() -> hanging.blocking(key))).isEqualTo("run 2");
			hanging.released().countDown();
			// The hung call's caller gets its own result, which is not stored.
			assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo("run 1");
			assertThat(hanging.blocking(key)).isEqualTo("run 2");
			assertThat(hanging.runs()).hasValue(2);
			assertExceeded(context.getBean(MeterRegistry.class), "blocking", output, key);
		});
	}

	@Test
	void aFutureThatNeverCompletesFreesItsKeyAndItsLateResultIsNotStored(CapturedOutput output) {
		this.runner.run((context) -> {
			Hanging hanging = context.getBean(Hanging.class);
			String key = "future-" + UUID.randomUUID();
			CompletableFuture<String> first = hanging.future(key);
			assertThat(retryUntilRun(() -> join(hanging.future(key)))).isEqualTo("run 2");
			hanging.stuckFuture().complete("run 1");
			assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo("run 1");
			assertThat(join(hanging.future(key))).isEqualTo("run 2");
			assertThat(hanging.runs()).hasValue(2);
			assertExceeded(context.getBean(MeterRegistry.class), "future", output, key);
		});
	}

	@Test
	void aMonoThatNeverCompletesFreesItsKeyAndItsLateResultIsNotStored(CapturedOutput output) {
		this.runner.run((context) -> {
			Hanging hanging = context.getBean(Hanging.class);
			String key = "mono-" + UUID.randomUUID();
			CompletableFuture<String> first = hanging.mono(key).toFuture();
			await().atMost(Duration.ofSeconds(10)).until(() -> hanging.runs().get() == 1);
			assertThat(retryUntilRun(() -> hanging.mono(key).block())).isEqualTo("run 2");
			hanging.stuckMono().tryEmitValue("run 1");
			assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo("run 1");
			assertThat(hanging.mono(key).block()).isEqualTo("run 2");
			assertThat(hanging.runs()).hasValue(2);
			assertExceeded(context.getBean(MeterRegistry.class), "mono", output, key);
		});
	}

	@Test
	void aMethodsOwnMaxDurationShorterThanItsLeaseIsRefusedAtStartUpNamingTheMethod() {
		this.runner.withUserConfiguration(ShortMaxDurationConfiguration.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("maxDuration")
				.hasMessageContaining("ShortMaxDuration#report");
		});
	}

	@Test
	void aLeaseLongerThanTheGlobalMaxDurationIsItsBoundSoAnApplicationThatSetItKeepsStarting() {
		this.runner.withPropertyValues("idempotent.max-duration=10s", "idempotent.lease=30s").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(Hanging.class).plain("k")).isEqualTo("k");
		});
	}

	/**
	 * Calls until the call is not refused as in progress; before maxDuration existed it
	 * was refused for as long as the hung call's JVM lived.
	 */
	private static String retryUntilRun(ThrowingCall call) {
		AtomicReference<String> result = new AtomicReference<>();
		await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() -> {
			try {
				result.set(call.call());
				return true;
			}
			catch (IdempotencyInProgressException ex) {
				return false;
			}
		});
		return result.get();
	}

	private static String join(CompletableFuture<String> future) throws Exception {
		try {
			return future.get(10, TimeUnit.SECONDS);
		}
		catch (ExecutionException ex) {
			throw (ex.getCause() instanceof Exception cause) ? cause : ex;
		}
	}

	private static void assertExceeded(MeterRegistry meters, String operation, CapturedOutput output, String key) {
		Counter counter = meters.find("idempotent.calls")
			.tag("operation", operation)
			.tag("outcome", "max_duration_exceeded")
			.counter();
		assertThat(counter).isNotNull();
		assertThat(counter.count()).isEqualTo(1);
		assertThat(output).contains(
				"Key '" + key + "' of " + operation + " has been held by one call for its " + "maxDuration (PT1.2S)");
		assertThat(output).doesNotContain("Lease of key '" + key + "'");
	}

	@FunctionalInterface
	interface ThrowingCall {

		String call() throws Exception;

	}

	@Configuration(proxyBeanMethods = false)
	static class HangingConfiguration {

		@Bean
		Hanging hanging() {
			return new Hanging();
		}

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ShortMaxDurationConfiguration {

		@Bean
		ShortMaxDuration shortMaxDuration() {
			return new ShortMaxDuration();
		}

	}

	static class ShortMaxDuration {

		@Idempotent(key = "#key", lease = "30s", maxDuration = "10s")
		public String report(String key) {
			return key;
		}

	}

	/**
	 * Methods whose first call hangs until the test lets it go, with a lease of 600 ms
	 * and a maxDuration of 1.2 s.
	 */
	static class Hanging {

		final AtomicInteger runs = new AtomicInteger();

		final CountDownLatch entered = new CountDownLatch(1);

		final CountDownLatch released = new CountDownLatch(1);

		final CompletableFuture<String> stuckFuture = new CompletableFuture<>();

		final Sinks.One<String> stuckMono = Sinks.one();

		// Read through methods: the bean is a class-based proxy, whose own fields are
		// not the target's.
		public AtomicInteger runs() {
			return this.runs;
		}

		public CountDownLatch entered() {
			return this.entered;
		}

		public CountDownLatch released() {
			return this.released;
		}

		public CompletableFuture<String> stuckFuture() {
			return this.stuckFuture;
		}

		public Sinks.One<String> stuckMono() {
			return this.stuckMono;
		}

		@Idempotent(key = "#key", name = "blocking", lease = "600ms", maxDuration = "1200ms")
		public String blocking(String key) {
			int run = this.runs.incrementAndGet();
			if (run == 1) {
				this.entered.countDown();
				try {
					this.released.await(60, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
			return "run " + run;
		}

		@Idempotent(key = "#key", name = "future", lease = "600ms", maxDuration = "1200ms")
		public CompletableFuture<String> future(String key) {
			int run = this.runs.incrementAndGet();
			return (run == 1) ? this.stuckFuture.thenApply((value) -> value)
					: CompletableFuture.completedFuture("run " + run);
		}

		@Idempotent(key = "#key", name = "mono", lease = "600ms", maxDuration = "1200ms")
		public Mono<String> mono(String key) {
			return Mono.defer(() -> {
				int run = this.runs.incrementAndGet();
				return (run == 1) ? this.stuckMono.asMono() : Mono.just("run " + run);
			});
		}

		@Idempotent(key = "#key")
		public String plain(String key) {
			return key;
		}

	}

}
