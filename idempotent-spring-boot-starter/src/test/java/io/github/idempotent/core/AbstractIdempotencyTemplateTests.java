package io.github.idempotent.core;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.core.ParameterizedTypeReference;

import io.github.idempotent.store.IdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link IdempotencyTemplate} through a real store: each callback counts its runs in a
 * ledger outside the store, so that a run the store did not prevent shows.
 */
abstract class AbstractIdempotencyTemplateTests {

	/**
	 * The auto-configured context on the store under test.
	 */
	protected abstract ApplicationContextRunner runner();

	protected abstract Class<? extends IdempotencyStore> storeType();

	/**
	 * Runs of each key's callback, kept apart from the store.
	 */
	private final Map<String, AtomicInteger> ledger = new ConcurrentHashMap<>();

	private int runs(String key) {
		AtomicInteger count = this.ledger.get(key);
		return (count != null) ? count.get() : 0;
	}

	private Receipt charge(String key, Order order) {
		int run = this.ledger.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
		return new Receipt(order.orderNo(), order.amount(), run);
	}

	private void run(ContextCallback callback) {
		runner().run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).hasSingleBean(storeType());
			callback.run(context, context.getBean(IdempotencyTemplate.class));
		});
	}

	@Test
	void concurrentDuplicatesRunTheCallbackOnceAndAllGetItsResult() {
		run((context, template) -> {
			String key = UUID.randomUUID().toString();
			Order order = new Order("A-1", new BigDecimal("12.50"));
			int callers = 16;
			CountDownLatch start = new CountDownLatch(1);
			ExecutorService pool = Executors.newFixedThreadPool(callers);
			try {
				List<Future<Receipt>> results = new ArrayList<>();
				for (int i = 0; i < callers; i++) {
					results.add(pool.submit(() -> {
						start.await();
						return template.operation("payments")
							.key(key)
							.payload(order)
							.waitFor(Duration.ofSeconds(10))
							.execute(Receipt.class, () -> {
								sleep(200);
								return charge(key, order);
							});
					}));
				}
				start.countDown();
				for (Future<Receipt> result : results) {
					assertThat(result.get(20, TimeUnit.SECONDS))
						.isEqualTo(new Receipt("A-1", new BigDecimal("12.50"), 1));
				}
			}
			finally {
				pool.shutdownNow();
			}
			assertThat(runs(key)).isOne();
		});
	}

	@Test
	void aReplayReturnsAnEqualRecordOfTheTypeAskedFor() {
		run((context, template) -> {
			String key = UUID.randomUUID().toString();
			Order order = new Order("A-2", new BigDecimal("7.10"));
			Receipt first = template.operation("payments")
				.key(key)
				.payload(order)
				.execute(Receipt.class, () -> charge(key, order));
			Receipt replay = template.operation("payments")
				.key(key)
				.payload(order)
				.execute(Receipt.class, () -> charge(key, order));
			assertThat(replay).isEqualTo(first).isNotSameAs(first);
			assertThat(replay.amount()).isEqualTo(new BigDecimal("7.10"));
			assertThat(runs(key)).isOne();
		});
	}

	@Test
	void aReplayOfAListOfRecordsKeepsItsElementType() {
		run((context, template) -> {
			String key = UUID.randomUUID().toString();
			ParameterizedTypeReference<List<Receipt>> receipts = new ParameterizedTypeReference<>() {
			};
			Callable<List<Receipt>> batch = () -> template.operation("batches")
				.key(key)
				.execute(receipts, () -> List.of(charge(key, new Order("B-1", BigDecimal.ONE)),
						charge(key, new Order("B-2", BigDecimal.TEN))));
			List<Receipt> first = batch.call();
			List<Receipt> replay = batch.call();
			assertThat(replay).isEqualTo(first).hasOnlyElementsOfType(Receipt.class).hasSize(2);
			assertThat(runs(key)).isEqualTo(2);
		});
	}

	@Test
	void theKeyWithAnotherPayloadIsRefusedAsReused() {
		run((context, template) -> {
			String key = UUID.randomUUID().toString();
			Order order = new Order("A-3", BigDecimal.ONE);
			template.operation("payments").key(key).payload(order).execute(Receipt.class, () -> charge(key, order));
			Order other = new Order("A-3", BigDecimal.TEN);
			assertThatExceptionOfType(IdempotencyKeyReusedException.class)
				.isThrownBy(() -> template.operation("payments")
					.key(key)
					.payload(other)
					.execute(Receipt.class, () -> charge(key, other)));
			assertThat(runs(key)).isOne();
		});
	}

	@Test
	void anExplicitFingerprintStandsForThePayload() {
		run((context, template) -> {
			String key = UUID.randomUUID().toString();
			Order order = new Order("A-4", BigDecimal.ONE);
			template.operation("payments").key(key).fingerprint("v1").execute(Receipt.class, () -> charge(key, order));
			assertThat(template.operation("payments")
				.key(key)
				.fingerprint("v1")
				.execute(Receipt.class, () -> charge(key, order))).isEqualTo(new Receipt("A-4", BigDecimal.ONE, 1));
			assertThatExceptionOfType(IdempotencyKeyReusedException.class)
				.isThrownBy(() -> template.operation("payments")
					.key(key)
					.fingerprint("v2")
					.execute(Receipt.class, () -> charge(key, order)));
			assertThat(runs(key)).isOne();
		});
	}

	@Test
	void anExceptionReleasesTheKeySoARetryRuns() {
		run((context, template) -> {
			String key = UUID.randomUUID().toString();
			Order order = new Order("A-5", BigDecimal.ONE);
			assertThatExceptionOfType(IllegalStateException.class)
				.isThrownBy(() -> template.operation("payments").key(key).payload(order).execute(Receipt.class, () -> {
					charge(key, order);
					throw new IllegalStateException("gateway timeout");
				}));
			Receipt retried = template.operation("payments")
				.key(key)
				.payload(order)
				.execute(Receipt.class, () -> charge(key, order));
			assertThat(retried.run()).isEqualTo(2);
			assertThat(runs(key)).isEqualTo(2);
		});
	}

	@Test
	void aDuplicateWhileTheFirstRunsIsRefusedAsInProgress() {
		run((context, template) -> {
			String key = UUID.randomUUID().toString();
			CountDownLatch entered = new CountDownLatch(1);
			CountDownLatch release = new CountDownLatch(1);
			CompletableFuture<Receipt> first = CompletableFuture
				.supplyAsync(() -> template.operation("payments").key(key).execute(Receipt.class, () -> {
					entered.countDown();
					await(release);
					return charge(key, new Order("A-6", BigDecimal.ONE));
				}));
			try {
				assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
				assertThatExceptionOfType(IdempotencyInProgressException.class)
					.isThrownBy(() -> template.operation("payments")
						.key(key)
						.waitFor(Duration.ZERO)
						.execute(Receipt.class, () -> charge(key, new Order("A-6", BigDecimal.ONE))))
					.satisfies((ex) -> {
						assertThat(ex.getOperation()).isEqualTo("payments");
						assertThat(ex.getKey()).isEqualTo(key);
					});
			}
			finally {
				release.countDown();
			}
			assertThat(first.get(10, TimeUnit.SECONDS).run()).isOne();
			assertThat(runs(key)).isOne();
		});
	}

	@Test
	void theCallbackSeesItsIdempotencyContext() {
		run((context, template) -> {
			String key = UUID.randomUUID().toString();
			AtomicReference<IdempotencyContext> current = new AtomicReference<>();
			Integer attempt = template.operation("payments").key(key).execute(Integer.class, () -> {
				current.set(IdempotencyContext.current().orElseThrow());
				return current.get().getAttempt();
			});
			assertThat(attempt).isOne();
			IdempotencyContext seen = current.get();
			assertThat(seen.isTakeover()).isFalse();
			assertThat(seen.getOperation()).isEqualTo("payments");
			assertThat(seen.getKey()).isEqualTo(key);
		});
	}

	@Test
	void scopesKeepTheSameKeyApart() {
		run((context, template) -> {
			String key = UUID.randomUUID().toString();
			Order order = new Order("A-7", BigDecimal.ONE);
			Receipt tenantA = template.operation("payments")
				.key(key)
				.scope("tenant-a")
				.payload(order)
				.execute(Receipt.class, () -> charge(key, order));
			Receipt tenantB = template.operation("payments")
				.key(key)
				.scope("tenant-b")
				.payload(order)
				.execute(Receipt.class, () -> charge(key, order));
			assertThat(tenantA.run()).isOne();
			assertThat(tenantB.run()).isEqualTo(2);
		});
	}

	@Test
	void aMissingBlankOrTooLongKeyIsRefusedNamingTheOperation() {
		run((context, template) -> {
			assertThatExceptionOfType(IdempotencyKeyException.class)
				.isThrownBy(() -> template.operation("refunds").execute(Receipt.class, () -> null))
				.withMessageContaining("operation 'refunds'")
				.withMessageContaining("key(...)");
			assertThatExceptionOfType(IdempotencyKeyException.class)
				.isThrownBy(() -> template.operation("refunds").key("  ").run(() -> {
				}))
				.withMessageContaining("operation 'refunds'");
			assertThatExceptionOfType(IdempotencyKeyException.class)
				.isThrownBy(() -> template.operation("refunds").key("k".repeat(300)).run(() -> {
				}))
				.withMessageContaining("refunds")
				.withMessageContaining("longer than 255");
		});
	}

	@Test
	void aBlankScopeTheApplicationPassesIsRefusedAsItsOwnNotAsTheScopeResolvers() {
		run((context, template) -> {
			// Not the executor's IdempotencyScopeException, which blames the resolver.
			assertThatExceptionOfType(IdempotencyKeyException.class)
				.isThrownBy(() -> template.operation("refunds").key("k-1").scope(" ").run(() -> {
					throw new AssertionError("must not run");
				}))
				.withMessageContaining("Scope of operation 'refunds' is blank")
				.withMessageContaining("scope(...)");
		});
	}

	@Test
	void aFutureRunsOnceAndItsReplayHasTheTypeAskedFor() {
		run((context, template) -> {
			String key = UUID.randomUUID().toString();
			Order order = new Order("F-1", new BigDecimal("3.30"));
			CompletableFuture<Receipt> first = template.operation("payments")
				.key(key)
				.payload(order)
				.executeAsync(Receipt.class, () -> CompletableFuture.supplyAsync(() -> charge(key, order),
						CompletableFuture.delayedExecutor(100, TimeUnit.MILLISECONDS)));
			assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(new Receipt("F-1", new BigDecimal("3.30"), 1));
			CompletableFuture<Receipt> replay = template.operation("payments")
				.key(key)
				.payload(order)
				.executeAsync(Receipt.class, () -> CompletableFuture.completedFuture(charge(key, order)));
			assertThat(replay.get(10, TimeUnit.SECONDS)).isEqualTo(first.get());
			assertThat(runs(key)).isOne();
		});
	}

	@Test
	void aFailedFutureReleasesTheKeyAndAnInvalidKeyFailsTheFuture() {
		run((context, template) -> {
			String key = UUID.randomUUID().toString();
			ParameterizedTypeReference<List<Receipt>> receipts = new ParameterizedTypeReference<>() {
			};
			CompletableFuture<List<Receipt>> failed = template.operation("batches")
				.key(key)
				.executeAsync(receipts, () -> {
					charge(key, new Order("F-2", BigDecimal.ONE));
					return CompletableFuture.failedFuture(new IllegalStateException("declined"));
				});
			assertThat(failed).failsWithin(Duration.ofSeconds(10))
				.withThrowableThat()
				.havingCause()
				.isInstanceOf(IllegalStateException.class);
			List<Receipt> retried = template.operation("batches")
				.key(key)
				.executeAsync(receipts,
						() -> CompletableFuture.completedFuture(List.of(charge(key, new Order("F-2", BigDecimal.ONE)))))
				.get(10, TimeUnit.SECONDS);
			assertThat(retried).singleElement().extracting(Receipt::run).isEqualTo(2);
			assertThat(template.operation("batches").key(null).executeAsync(receipts, () -> null))
				.failsWithin(Duration.ofSeconds(1))
				.withThrowableThat()
				.havingCause()
				.isInstanceOf(IdempotencyKeyException.class);
		});
	}

	@Test
	void aMonoRunsOnceOnSubscriptionAndItsReplayHasTheTypeAskedFor() {
		run((context, template) -> {
			String key = UUID.randomUUID().toString();
			Order order = new Order("M-1", new BigDecimal("9.99"));
			Mono<Receipt> payment = template.operation("payments")
				.key(key)
				.payload(order)
				.executeMono(Receipt.class, () -> Mono.fromSupplier(() -> charge(key, order))
					.delayElement(Duration.ofMillis(50), Schedulers.parallel()));
			assertThat(runs(key)).isZero();
			Receipt expected = new Receipt("M-1", new BigDecimal("9.99"), 1);
			StepVerifier.create(payment).expectNext(expected).verifyComplete();
			StepVerifier.create(payment).expectNext(expected).verifyComplete();
			StepVerifier
				.create(template.operation("payments")
					.key(key)
					.payload(new Order("M-1", BigDecimal.ONE))
					.executeMono(Receipt.class, () -> Mono.fromSupplier(() -> charge(key, order))))
				.verifyError(IdempotencyKeyReusedException.class);
			assertThat(runs(key)).isOne();
		});
	}

	@Test
	void aFailedMonoReleasesTheKeyAndItsContextIsVisible() {
		run((context, template) -> {
			String key = UUID.randomUUID().toString();
			Mono<Integer> attempt = template.operation("payments")
				.key(key)
				.executeMono(Integer.class, () -> Mono.deferContextual((view) -> {
					charge(key, new Order("M-2", BigDecimal.ONE));
					IdempotencyContext idempotency = view.get(IdempotencyContext.REACTOR_CONTEXT_KEY);
					return (runs(key) == 1) ? Mono.error(new IllegalStateException("declined"))
							: Mono.just(idempotency.getAttempt());
				}));
			StepVerifier.create(attempt).verifyError(IllegalStateException.class);
			StepVerifier.create(attempt).expectNext(1).verifyComplete();
			StepVerifier.create(template.operation("payments").key(" ").executeMono(Integer.class, Mono::empty))
				.verifyError(IdempotencyKeyException.class);
			assertThat(runs(key)).isEqualTo(2);
		});
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static void await(CountDownLatch latch) {
		try {
			latch.await(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	@FunctionalInterface
	interface ContextCallback {

		void run(ApplicationContext context, IdempotencyTemplate template) throws Exception;

	}

	record Order(String orderNo, BigDecimal amount) {
	}

	record Receipt(String orderNo, BigDecimal amount, int run) {
	}

}
