package io.github.idempotent.observation;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.IdempotentAnnotationAutoConfiguration;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.annotation.DuplicateHandling;
import io.github.idempotent.core.IdempotencyContext;
import io.github.idempotent.core.IdempotencyInProgressException;
import io.github.idempotent.core.IdempotencyKeyReusedException;
import io.github.idempotent.core.IdempotencyStoreUnavailableException;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The observation {@code idempotent.call} of calls through the real interceptor and a
 * real Redis: one per call, with the outcome each call had, the store's steps as events,
 * and the caller's observation as parent.
 */
class IdempotencyObservationTests {

	private final String prefix = "obs-" + UUID.randomUUID();

	private final TestObservationRegistry registry = TestObservationRegistry.create();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, DataRedisAutoConfiguration.class,
				IdempotentAutoConfiguration.class, IdempotentAnnotationAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=" + TestRedis.host(), "spring.data.redis.port=" + TestRedis.port(),
				"idempotent.key-prefix=" + this.prefix, "idempotent.default-scope=global")
		.withBean(ObservationRegistry.class, () -> this.registry)
		.withBean(Orders.class);

	@Test
	void aFirstCallIsExecutedAndARetryReplayed() {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			assertThat(orders.place("k1", "book")).isEqualTo("book #1");
			assertThat(this.registry).hasSingleObservationThat()
				.hasNameEqualTo("idempotent.call")
				.hasContextualNameEqualTo("idempotent orders")
				.hasLowCardinalityKeyValue("operation", "orders")
				.hasLowCardinalityKeyValue("outcome", "executed")
				.hasLowCardinalityKeyValue("store", "redis")
				.doesNotHaveHighCardinalityKeyValueWithKey("idempotency.key")
				.doesNotHaveError()
				.hasBeenStopped()
				.hasEvent("claimed")
				.hasEvent("completing")
				.doesNotHaveEvent("releasing");
			this.registry.clear();
			assertThat(orders.place("k1", "book")).isEqualTo("book #1");
			assertThat(this.registry).hasSingleObservationThat()
				.hasLowCardinalityKeyValue("outcome", "replayed")
				.hasEvent("claimed")
				.doesNotHaveEvent("completing")
				.hasBeenStopped();
		});
	}

	@Test
	void aSkippedDuplicateIsSkippedAndAFlaggedOneFlaggedEvenWhenItFails() {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			orders.placeOnce("k-skip", "book");
			this.registry.clear();
			assertThat(orders.placeOnce("k-skip", "book")).isNull();
			assertThat(this.registry).hasSingleObservationThat()
				.hasLowCardinalityKeyValue("outcome", "skipped")
				.doesNotHaveError()
				.doesNotHaveEvent("completing")
				.hasBeenStopped();
			orders.placeFlagged("k-flag", "book");
			this.registry.clear();
			assertThatExceptionOfType(IllegalStateException.class)
				.isThrownBy(() -> orders.placeFlagged("k-flag", "book"));
			assertThat(this.registry).hasSingleObservationThat()
				.hasLowCardinalityKeyValue("outcome", "flagged")
				.hasError()
				.doesNotHaveEvent("completing")
				.doesNotHaveEvent("releasing")
				.hasBeenStopped();
		});
	}

	@Test
	void aDifferentPayloadIsKeyReused() {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			orders.place("k2", "book");
			this.registry.clear();
			assertThatExceptionOfType(IdempotencyKeyReusedException.class).isThrownBy(() -> orders.place("k2", "lamp"));
			assertThat(this.registry).hasSingleObservationThat()
				.hasLowCardinalityKeyValue("outcome", "key-reused")
				.hasError()
				.hasBeenStopped();
		});
	}

	@Test
	void aDuplicateOfARunningCallIsInProgress() throws Exception {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> orders.slow("k3"));
			assertThat(orders.awaitStarted()).isTrue();
			assertThatExceptionOfType(IdempotencyInProgressException.class).isThrownBy(() -> orders.slow("k3"));
			orders.release();
			assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo("slow #1");
			assertThat(this.registry).hasNumberOfObservationsWithNameEqualTo("idempotent.call", 2)
				.hasAnObservation((observation) -> observation.hasLowCardinalityKeyValue("outcome", "in-progress"))
				.hasAnObservation((observation) -> observation.hasLowCardinalityKeyValue("outcome", "executed"));
		});
	}

	@Test
	void anExceptionOfTheMethodIsAnErrorWithTheThrowable() {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			Throwable thrown = catchThrowable(() -> orders.decline("k4"));
			assertThat(thrown).isInstanceOf(IllegalStateException.class);
			assertThat(this.registry).hasSingleObservationThat()
				.hasLowCardinalityKeyValue("outcome", "error")
				.hasError(thrown)
				.hasEvent("claimed")
				.hasEvent("releasing")
				.hasBeenStopped();
		});
	}

	@Test
	void aStoreUnavailableFailureOfTheMethodItselfIsAnError() {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			// A guarded call the method makes fails closed: the method failed, not this
			// call's store.
			Throwable thrown = catchThrowable(() -> orders.reserveStock("k4b"));
			assertThat(thrown).isInstanceOf(IdempotencyStoreUnavailableException.class);
			assertThat(this.registry).hasSingleObservationThat()
				.hasLowCardinalityKeyValue("outcome", "error")
				.hasError(thrown)
				.hasEvent("releasing")
				.hasBeenStopped();
		});
	}

	@Test
	void aStoreThatCannotBeReachedIsStoreUnavailableWhenFailingClosed() {
		this.runner.withPropertyValues(unreachableRedis()).run((context) -> {
			Orders orders = context.getBean(Orders.class);
			assertThatExceptionOfType(IdempotencyStoreUnavailableException.class)
				.isThrownBy(() -> orders.place("k5", "book"));
			assertThat(orders.runs()).isZero();
			assertThat(this.registry).hasSingleObservationThat()
				.hasLowCardinalityKeyValue("outcome", "store-unavailable")
				.hasError()
				.doesNotHaveEvent("claimed")
				.hasBeenStopped();
		});
	}

	@Test
	void aStoreThatCannotBeReachedIsBypassedWhenFailingOpen() {
		this.runner.withPropertyValues(unreachableRedis())
			.withPropertyValues("idempotent.failure-mode=open")
			.run((context) -> {
				Orders orders = context.getBean(Orders.class);
				assertThat(orders.place("k6", "book")).isEqualTo("book #1");
				assertThat(this.registry).hasSingleObservationThat()
					.hasLowCardinalityKeyValue("outcome", "bypassed")
					.doesNotHaveError()
					.hasBeenStopped();
			});
	}

	@Test
	void aCallWhoseKeyWasTakenOverIsLeaseLost() {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			assertThat(orders.stolen("k7-" + UUID.randomUUID())).isEqualTo("stolen #1");
			assertThat(this.registry).hasNumberOfObservationsWithNameEqualTo("idempotent.call", 2)
				.hasAnObservation((observation) -> observation.hasLowCardinalityKeyValue("outcome", "lease-lost"))
				.hasAnObservation((observation) -> observation.hasLowCardinalityKeyValue("outcome", "executed"));
		});
	}

	@Test
	void whatTheMethodObservesNestsInsideTheCall() {
		this.runner.run((context) -> {
			context.getBean(Orders.class).nested("k8");
			assertThat(this.registry).hasObservationWithNameEqualTo("inventory.lookup")
				.that()
				.hasParentObservationContextMatching((parent) -> parent instanceof IdempotencyObservationContext call
						&& call.getOperation().equals("orders.nested"));
		});
	}

	@Test
	void aCompletableFutureIsObservedUntilItsOutcomeIsStored() {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			assertThat(orders.placeAsync("k9", "book").get(10, TimeUnit.SECONDS)).isEqualTo("book #1");
			assertThat(this.registry).hasSingleObservationThat()
				.hasLowCardinalityKeyValue("operation", "orders.async")
				.hasLowCardinalityKeyValue("outcome", "executed")
				.hasEvent("completing")
				.hasBeenStopped();
			this.registry.clear();
			assertThat(orders.placeAsync("k9", "book").get(10, TimeUnit.SECONDS)).isEqualTo("book #1");
			assertThat(this.registry).hasSingleObservationThat()
				.hasLowCardinalityKeyValue("outcome", "replayed")
				.hasBeenStopped();
			this.registry.clear();
			Throwable failure = catchThrowable(() -> orders.declineAsync("k10").join());
			assertThat(failure).hasCauseInstanceOf(IllegalStateException.class);
			assertThat(this.registry).hasSingleObservationThat()
				.hasLowCardinalityKeyValue("outcome", "error")
				.hasError(failure.getCause())
				.hasBeenStopped();
		});
	}

	@Test
	void aCompletableFutureCompletesWhenAnObservationHandlerFailsOnStop() {
		this.registry.observationConfig().observationHandler(new FailingOnStop());
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			// As on the blocking path, the handler's failure is the caller's; the
			// outcome is stored, so a retry gets the result.
			for (int call = 0; call < 2; call++) {
				CompletableFuture<String> placed = orders.placeAsync("k15", "book");
				assertThat(catchThrowable(() -> placed.get(10, TimeUnit.SECONDS)))
					.isInstanceOf(ExecutionException.class)
					.rootCause()
					.hasMessage("tracer down");
			}
			assertThat(orders.runs()).isEqualTo(1);
		});
	}

	@Test
	void aMonoIsObservedWithItsSubscribersObservationAsParent() {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			Observation parent = Observation.start("checkout", this.registry);
			String result = orders.placeReactive("k11", "book")
				.contextWrite(Context.of(ObservationThreadLocalAccessor.KEY, parent))
				.block();
			parent.stop();
			assertThat(result).isEqualTo("book #1 observed");
			assertThat(this.registry).hasObservationWithNameEqualTo("idempotent.call")
				.that()
				.hasLowCardinalityKeyValue("operation", "orders.reactive")
				.hasLowCardinalityKeyValue("outcome", "executed")
				.hasParentObservationEqualTo(parent)
				.hasBeenStopped();
			this.registry.clear();
			assertThat(orders.placeReactive("k11", "book").block()).isEqualTo("book #1 observed");
			assertThat(this.registry).hasSingleObservationThat()
				.hasLowCardinalityKeyValue("outcome", "replayed")
				.doesNotHaveParentObservation()
				.hasBeenStopped();
		});
	}

	@Test
	void anObservedMonoFailsAsAnUnobservedOneWould() {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			// Reactor unwraps one CompletionException of a future, and only one.
			Object failure = orders.failReactive("k16").cast(Object.class).onErrorResume(Mono::just).block();
			assertThat(failure).isInstanceOf(ExecutionException.class)
				.extracting(Throwable.class::cast)
				.extracting(Throwable::getCause)
				.isInstanceOf(IllegalStateException.class);
			assertThat(this.registry).hasSingleObservationThat()
				.hasLowCardinalityKeyValue("outcome", "error")
				.hasBeenStopped();
		});
	}

	@Test
	void theKeyIsOnSpansOnlyWhenAskedFor() {
		this.runner.withPropertyValues("idempotent.observation.include-key=true").run((context) -> {
			context.getBean(Orders.class).place("k12", "book");
			assertThat(this.registry).hasSingleObservationThat()
				.hasHighCardinalityKeyValue("idempotency.key", "k12")
				.doesNotHaveLowCardinalityKeyValueWithKey("idempotency.key");
		});
	}

	@Test
	void aConventionBeanReplacesTheDefault() {
		this.runner.withBean(IdempotencyObservationConvention.class, CheckoutConvention::new).run((context) -> {
			context.getBean(Orders.class).place("k13", "book");
			assertThat(this.registry).hasSingleObservationThat()
				.hasNameEqualTo("checkout.idempotency")
				.hasLowCardinalityKeyValue("tenant", "acme")
				.hasBeenStopped();
		});
	}

	@Test
	void anObservationTurnedOffByAPredicateLeavesTheCallUnobserved() {
		// What management.observations.enable.idempotent=false does in Boot.
		this.registry.observationConfig().observationPredicate((name, context) -> !name.startsWith("idempotent"));
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			assertThat(orders.place("k14", "book")).isEqualTo("book #1");
			assertThat(orders.place("k14", "book")).isEqualTo("book #1");
			assertThat(this.registry).doesNotHaveAnyObservation();
		});
	}

	private static String[] unreachableRedis() {
		return new String[] { "spring.data.redis.port=" + closedPort(), "spring.data.redis.timeout=500ms",
				"spring.data.redis.connect-timeout=500ms" };
	}

	private static int closedPort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	static class FailingOnStop implements ObservationHandler<Observation.Context> {

		@Override
		public boolean supportsContext(Observation.Context context) {
			return true;
		}

		@Override
		public void onStop(Observation.Context context) {
			throw new IllegalStateException("tracer down");
		}

	}

	static class CheckoutConvention implements IdempotencyObservationConvention {

		@Override
		public String getName() {
			return "checkout.idempotency";
		}

		@Override
		public KeyValues getLowCardinalityKeyValues(IdempotencyObservationContext context) {
			return KeyValues.of("tenant", "acme");
		}

	}

	static class Orders {

		final AtomicInteger runs = new AtomicInteger();

		final CountDownLatch started = new CountDownLatch(1);

		final CountDownLatch release = new CountDownLatch(1);

		private final ObjectProvider<Orders> self;

		private final ObjectProvider<StringRedisTemplate> redis;

		private final ObservationRegistry registry;

		Orders(ObjectProvider<Orders> self, ObjectProvider<StringRedisTemplate> redis, ObservationRegistry registry) {
			this.self = self;
			this.redis = redis;
			this.registry = registry;
		}

		// Through the proxy, which has none of the target's fields.
		public int runs() {
			return this.runs.get();
		}

		public boolean awaitStarted() throws InterruptedException {
			return this.started.await(10, TimeUnit.SECONDS);
		}

		public void release() {
			this.release.countDown();
		}

		@Idempotent(key = "#key", name = "orders")
		public String place(String key, String item) {
			return item + " #" + this.runs.incrementAndGet();
		}

		@Idempotent(key = "#key", name = "orders.once", onDuplicate = DuplicateHandling.SKIP)
		public String placeOnce(String key, String item) {
			return item + " #" + this.runs.incrementAndGet();
		}

		@Idempotent(key = "#key", name = "orders.flagged", onDuplicate = DuplicateHandling.FLAG)
		public String placeFlagged(String key, String item) {
			if (IdempotencyContext.current().orElseThrow().isDuplicate()) {
				throw new IllegalStateException("already placed");
			}
			return item + " #" + this.runs.incrementAndGet();
		}

		@Idempotent(key = "#key", name = "orders.slow")
		public String slow(String key) {
			this.started.countDown();
			try {
				this.release.await(10, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			return "slow #" + this.runs.incrementAndGet();
		}

		@Idempotent(key = "#key", name = "orders.reserve")
		public String reserveStock(String key) {
			throw new IdempotencyStoreUnavailableException("inventory", Duration.ofSeconds(1),
					new IllegalStateException("inventory store down"));
		}

		@Idempotent(key = "#key", name = "orders.decline")
		public String decline(String key) {
			throw new IllegalStateException("card declined");
		}

		/**
		 * Its record is deleted while it runs and claimed by a second call with the key:
		 * when the first completes, its claim is no longer its own.
		 */
		@Idempotent(key = "#key", name = "orders.stolen")
		public String stolen(String key) {
			int run = this.runs.incrementAndGet();
			if (run == 1) {
				StringRedisTemplate redis = this.redis.getObject();
				Set<String> records = redis.keys("*" + key + "*");
				assertThat(records).hasSize(1);
				redis.delete(records);
				this.self.getObject().stolen(key);
			}
			return "stolen #" + run;
		}

		@Idempotent(key = "#key", name = "orders.nested")
		public String nested(String key) {
			return Observation.createNotStarted("inventory.lookup", this.registry).observe(() -> "in stock");
		}

		@Idempotent(key = "#key", name = "orders.async")
		public CompletableFuture<String> placeAsync(String key, String item) {
			return CompletableFuture.supplyAsync(() -> item + " #" + this.runs.incrementAndGet());
		}

		@Idempotent(key = "#key", name = "orders.async-decline")
		public CompletableFuture<String> declineAsync(String key) {
			return CompletableFuture.supplyAsync(() -> {
				throw new IllegalStateException("card declined");
			});
		}

		@Idempotent(key = "#key", name = "orders.reactive-failing")
		public Mono<String> failReactive(String key) {
			throw new CompletionException(new ExecutionException(new IllegalStateException("card declined")));
		}

		@Idempotent(key = "#key", name = "orders.reactive")
		public Mono<String> placeReactive(String key, String item) {
			// The method's Mono sees the call's observation in its context.
			return Mono.deferContextual((context) -> Mono.just(item + " #" + this.runs.incrementAndGet()
					+ (context.getOrEmpty(ObservationThreadLocalAccessor.KEY)
						.filter((value) -> value instanceof Observation observation
								&& observation.getContext() instanceof IdempotencyObservationContext)
						.isPresent() ? " observed" : " unobserved")));
		}

	}

}
