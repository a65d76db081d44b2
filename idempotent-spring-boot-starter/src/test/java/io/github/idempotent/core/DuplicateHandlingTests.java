package io.github.idempotent.core;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.annotation.DuplicateHandling;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code @Idempotent(onDuplicate)} on service methods, on the test Redis: a duplicate of
 * a completed call is replayed, skipped or run again flagged, alike for a method that
 * returns its value, a {@code CompletableFuture} and a {@code Mono}; each counted apart.
 * And the combinations that fail the start-up.
 */
class DuplicateHandlingTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, DataRedisAutoConfiguration.class,
				IdempotentAutoConfiguration.class, IdempotentAnnotationAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=" + TestRedis.host(), "spring.data.redis.port=" + TestRedis.port(),
				"idempotent.default-scope=global", "idempotent.store.type=redis",
				"idempotent.key-prefix=duplicates-" + UUID.randomUUID())
		.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
		.withBean(Payments.class);

	@ParameterizedTest
	@EnumSource(Kind.class)
	void replayReturnsTheStoredResultWithoutRunning(Kind kind) {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			String key = UUID.randomUUID().toString();
			assertThat(call(kind, DuplicateHandling.REPLAY, payments, key, "10")).isEqualTo("paid 10 #1");
			assertThat(call(kind, DuplicateHandling.REPLAY, payments, key, "10")).isEqualTo("paid 10 #1");
			assertThat(payments.runs()).isEqualTo(1);
			assertThat(count(context, "replay-" + kind, "replayed")).isEqualTo(1);
		});
	}

	@ParameterizedTest
	@EnumSource(Kind.class)
	void skipReturnsNothingWithoutRunning(Kind kind) {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			String key = UUID.randomUUID().toString();
			assertThat(call(kind, DuplicateHandling.SKIP, payments, key, "10")).isEqualTo("paid 10 #1");
			assertThat(call(kind, DuplicateHandling.SKIP, payments, key, "10")).isNull();
			assertThat(payments.runs()).isEqualTo(1);
			assertThat(count(context, "skip-" + kind, "skipped")).isEqualTo(1);
			assertThat(count(context, "skip-" + kind, "replayed")).isZero();
		});
	}

	@ParameterizedTest
	@EnumSource(Kind.class)
	void flagRunsTheDuplicateFlaggedAndLeavesTheStoredResult(Kind kind) {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			String key = UUID.randomUUID().toString();
			assertThat(call(kind, DuplicateHandling.FLAG, payments, key, "10")).isEqualTo("paid 10 #1");
			assertThat(call(kind, DuplicateHandling.FLAG, payments, key, "10")).isEqualTo("paid 10 #2 (duplicate)");
			assertThat(payments.duplicateFlags()).containsExactly(false, true);
			assertThat(count(context, "flag-" + kind, "flagged")).isEqualTo(1);
			// The operation's record, read by a replaying method of the same name.
			assertThat(storedOfFlag(kind, payments, key, "10")).isEqualTo("paid 10 #1");
			assertThat(payments.runs()).isEqualTo(2);
		});
	}

	@ParameterizedTest
	@EnumSource(Kind.class)
	void aFlaggedRunThatFailsFailsItsCallerAndLeavesTheStoredResult(Kind kind) {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			String key = UUID.randomUUID().toString();
			assertThat(call(kind, DuplicateHandling.FLAG, payments, key, Payments.FAIL_IF_DUPLICATE))
				.isEqualTo("paid " + Payments.FAIL_IF_DUPLICATE + " #1");
			assertThatExceptionOfType(IllegalStateException.class)
				.isThrownBy(() -> call(kind, DuplicateHandling.FLAG, payments, key, Payments.FAIL_IF_DUPLICATE))
				.withMessage("refused a duplicate");
			assertThat(storedOfFlag(kind, payments, key, Payments.FAIL_IF_DUPLICATE))
				.isEqualTo("paid " + Payments.FAIL_IF_DUPLICATE + " #1");
		});
	}

	@ParameterizedTest
	@EnumSource(Kind.class)
	void anotherPayloadIsARefusedKeyWhetherSkippedOrFlagged(Kind kind) {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			for (DuplicateHandling mode : List.of(DuplicateHandling.SKIP, DuplicateHandling.FLAG)) {
				String key = UUID.randomUUID().toString();
				call(kind, mode, payments, key, "10");
				assertThatExceptionOfType(IdempotencyKeyReusedException.class)
					.isThrownBy(() -> call(kind, mode, payments, key, "99"));
			}
			assertThat(payments.runs()).isEqualTo(2);
			assertThat(count(context, "skip-" + kind, "key_reused")).isEqualTo(1);
			assertThat(count(context, "flag-" + kind, "key_reused")).isEqualTo(1);
		});
	}

	@Test
	void skipDoesNotReadTheStoredResultSoOneThatNoLongerDecodesDoesNotMatter() {
		this.runner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			String key = UUID.randomUUID().toString();
			assertThat(payments.storeText(key)).isEqualTo("not a number");
			assertThatExceptionOfType(IdempotencyResultException.class).isThrownBy(() -> payments.replayAsNumber(key));
			assertThat(payments.skipAsNumber(key)).isNull();
		});
	}

	@Test
	void skipOrFlagOnAnHttpHandlerMethodFailsTheStartUpNamingIt() {
		this.runner.withBean(SkippingController.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
				.hasMessageContaining(SkippingController.class.getName() + "#order(")
				.hasMessageContaining("onDuplicate = SKIP is not allowed on an HTTP handler method");
		});
		this.runner.withBean(FlaggingController.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
				.hasMessageContaining(FlaggingController.class.getName() + "#order(")
				.hasMessageContaining("onDuplicate = FLAG is not allowed on an HTTP handler method");
		});
	}

	@Test
	void skipOnAMethodReturningAPrimitiveFailsTheStartUpNamingIt() {
		this.runner.withBean(PrimitiveSkip.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
				.hasMessageContaining(PrimitiveSkip.class.getName() + "#count(")
				.hasMessageContaining("cannot return")
				.hasMessageContaining("Integer");
		});
	}

	@Test
	void skipOnAMethodReturningAnOptionalFailsTheStartUpNamingIt() {
		this.runner.withBean(OptionalSkip.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
				.hasMessageContaining(OptionalSkip.class.getName() + "#find(")
				.hasMessageContaining("Optional");
		});
	}

	@Test
	void flagOnAMethodReturningAPrimitiveAndSkipOnAVoidMethodStart() {
		this.runner.withBean(PrimitiveFlagAndVoidSkip.class).run((context) -> {
			assertThat(context).hasNotFailed();
			PrimitiveFlagAndVoidSkip bean = context.getBean(PrimitiveFlagAndVoidSkip.class);
			String key = UUID.randomUUID().toString();
			assertThat(bean.count(key)).isEqualTo(1);
			assertThat(bean.count(key)).isEqualTo(2);
			bean.announce(key);
			bean.announce(key);
			assertThat(bean.announced()).isEqualTo(1);
		});
	}

	private static @Nullable Object call(Kind kind, DuplicateHandling mode, Payments payments, String key,
			String amount) throws Throwable {
		try {
			return switch (kind) {
				case BLOCKING -> switch (mode) {
					case REPLAY -> payments.replayBlocking(key, amount);
					case SKIP -> payments.skipBlocking(key, amount);
					case FLAG -> payments.flagBlocking(key, amount);
				};
				case FUTURE -> switch (mode) {
					case REPLAY -> payments.replayFuture(key, amount).get();
					case SKIP -> payments.skipFuture(key, amount).get();
					case FLAG -> payments.flagFuture(key, amount).get();
				};
				case MONO -> switch (mode) {
					case REPLAY -> payments.replayMono(key, amount).block();
					case SKIP -> payments.skipMono(key, amount).block();
					case FLAG -> payments.flagMono(key, amount).block();
				};
			};
		}
		catch (ExecutionException ex) {
			throw ex.getCause();
		}
	}

	/**
	 * What a flagged operation has stored: a method that shares its name shares its
	 * records, and replays them.
	 */
	private static String storedOfFlag(Kind kind, Payments payments, String key, String amount) {
		return switch (kind) {
			case BLOCKING -> payments.replayOfFlagBlocking(key, amount);
			case FUTURE -> payments.replayOfFlagFuture(key, amount);
			case MONO -> payments.replayOfFlagMono(key, amount);
		};
	}

	private static double count(AssertableApplicationContext context, String operation, String outcome) {
		Counter counter = context.getBean(MeterRegistry.class)
			.find("idempotent.calls")
			.tags("operation", operation, "outcome", outcome)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	enum Kind {

		BLOCKING, FUTURE, MONO;

		@Override
		public String toString() {
			return name().toLowerCase();
		}

	}

	static class Payments {

		static final String FAIL_IF_DUPLICATE = "fail-if-duplicate";

		private final AtomicInteger runs = new AtomicInteger();

		private final List<Boolean> duplicateFlags = new CopyOnWriteArrayList<>();

		int runs() {
			return this.runs.get();
		}

		List<Boolean> duplicateFlags() {
			return this.duplicateFlags;
		}

		/**
		 * The work of every method, given whether its call runs for a duplicate: read
		 * from the thread (a value or a future) or from the Reactor context (a Mono).
		 */
		private String pay(String amount, boolean duplicate) {
			this.duplicateFlags.add(duplicate);
			if (duplicate && amount.equals(FAIL_IF_DUPLICATE)) {
				throw new IllegalStateException("refused a duplicate");
			}
			return "paid " + amount + " #" + this.runs.incrementAndGet() + (duplicate ? " (duplicate)" : "");
		}

		private String pay(String amount) {
			return pay(amount, IdempotencyContext.current().orElseThrow().isDuplicate());
		}

		private Mono<String> payLater(String amount) {
			return Mono.deferContextual((context) -> Mono.fromCallable(() -> pay(amount,
					context.<IdempotencyContext>get(IdempotencyContext.REACTOR_CONTEXT_KEY).isDuplicate())));
		}

		@Idempotent(name = "replay-blocking", key = "#key")
		public String replayBlocking(String key, String amount) {
			return pay(amount);
		}

		@Idempotent(name = "skip-blocking", key = "#key", onDuplicate = DuplicateHandling.SKIP)
		public String skipBlocking(String key, String amount) {
			return pay(amount);
		}

		@Idempotent(name = "flag-blocking", key = "#key", onDuplicate = DuplicateHandling.FLAG)
		public String flagBlocking(String key, String amount) {
			return pay(amount);
		}

		@Idempotent(name = "replay-future", key = "#key")
		public CompletableFuture<String> replayFuture(String key, String amount) {
			return CompletableFuture.completedFuture(pay(amount));
		}

		@Idempotent(name = "skip-future", key = "#key", onDuplicate = DuplicateHandling.SKIP)
		public CompletableFuture<String> skipFuture(String key, String amount) {
			return CompletableFuture.completedFuture(pay(amount));
		}

		@Idempotent(name = "flag-future", key = "#key", onDuplicate = DuplicateHandling.FLAG)
		public CompletableFuture<String> flagFuture(String key, String amount) {
			// Read on the calling thread, before the work moves to another.
			boolean duplicate = IdempotencyContext.current().orElseThrow().isDuplicate();
			return CompletableFuture.supplyAsync(() -> pay(amount, duplicate));
		}

		@Idempotent(name = "replay-mono", key = "#key")
		public Mono<String> replayMono(String key, String amount) {
			return payLater(amount);
		}

		@Idempotent(name = "skip-mono", key = "#key", onDuplicate = DuplicateHandling.SKIP)
		public Mono<String> skipMono(String key, String amount) {
			return payLater(amount);
		}

		@Idempotent(name = "flag-mono", key = "#key", onDuplicate = DuplicateHandling.FLAG)
		public Mono<String> flagMono(String key, String amount) {
			return payLater(amount);
		}

		@Idempotent(name = "flag-blocking", key = "#key")
		public String replayOfFlagBlocking(String key, String amount) {
			throw new AssertionError("the stored result is replayed");
		}

		@Idempotent(name = "flag-future", key = "#key")
		public String replayOfFlagFuture(String key, String amount) {
			throw new AssertionError("the stored result is replayed");
		}

		@Idempotent(name = "flag-mono", key = "#key")
		public String replayOfFlagMono(String key, String amount) {
			throw new AssertionError("the stored result is replayed");
		}

		@Idempotent(name = "undecodable", key = "#key")
		public String storeText(String key) {
			return "not a number";
		}

		@Idempotent(name = "undecodable", key = "#key")
		public Integer replayAsNumber(String key) {
			throw new AssertionError("the stored result is replayed");
		}

		@Idempotent(name = "undecodable", key = "#key", onDuplicate = DuplicateHandling.SKIP)
		public Integer skipAsNumber(String key) {
			throw new AssertionError("the duplicate is skipped");
		}

	}

	static class SkippingController {

		@PostMapping("/orders")
		@Idempotent(onDuplicate = DuplicateHandling.SKIP)
		public String order(String body) {
			return body;
		}

	}

	interface OrdersApi {

		@GetMapping("/orders")
		String order(String id);

	}

	static class FlaggingController implements OrdersApi {

		@Override
		@Idempotent(key = "#id", onDuplicate = DuplicateHandling.FLAG)
		public String order(String id) {
			return id;
		}

	}

	static class PrimitiveSkip {

		@Idempotent(key = "#key", onDuplicate = DuplicateHandling.SKIP)
		public int count(String key) {
			return 1;
		}

	}

	static class OptionalSkip {

		@Idempotent(key = "#key", onDuplicate = DuplicateHandling.SKIP)
		public java.util.Optional<String> find(String key) {
			return java.util.Optional.of(key);
		}

	}

	static class PrimitiveFlagAndVoidSkip {

		private final AtomicInteger counted = new AtomicInteger();

		private final AtomicInteger announced = new AtomicInteger();

		int announced() {
			return this.announced.get();
		}

		@Idempotent(key = "#key", onDuplicate = DuplicateHandling.FLAG)
		public int count(String key) {
			return this.counted.incrementAndGet();
		}

		@Idempotent(key = "#key", onDuplicate = DuplicateHandling.SKIP)
		public void announce(String key) {
			this.announced.incrementAndGet();
		}

	}

}
