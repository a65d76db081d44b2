package io.github.idempotent.core;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.ResolvableType;

import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;
import io.github.idempotent.testsupport.ForwardingIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class IdempotencyExecutorTests {

	private final InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore();

	private final AtomicInteger leaseLost = new AtomicInteger();

	private final IdempotencyObserver observer = new IdempotencyObserver() {

		@Override
		public void leaseLost(IdempotencyPolicy policy, String key) {
			IdempotencyExecutorTests.this.leaseLost.incrementAndGet();
		}

	};

	private IdempotencyExecutor executor;

	@AfterEach
	void close() {
		if (this.executor != null) {
			this.executor.close();
		}
	}

	@Test
	void anOwnerThatLostItsLeaseCannotOverwriteTheNewOwnersResult() throws Throwable {
		// Renewals fail, as when the owner is partitioned from the store.
		IdempotencyStore store = new RefusingRenewals(this.memory);
		this.executor = new IdempotencyExecutor(store, FailureMode.CLOSED, 1024, this.observer);
		IdempotencyPolicy policy = policy(Duration.ofMillis(200));
		RecordKey key = new RecordKey("test:lost-lease");
		Fingerprint fingerprint = new Fingerprint("fp");
		CountDownLatch slowStarted = new CountDownLatch(1);
		CompletableFuture<Object> slow = CompletableFuture.supplyAsync(() -> {
			try {
				return this.executor.execute(policy, "k", key, fingerprint, () -> {
					slowStarted.countDown();
					Thread.sleep(800);
					return "slow owner";
				}, null);
			}
			catch (Throwable ex) {
				throw new IllegalStateException(ex);
			}
		});
		assertThat(slowStarted.await(5, TimeUnit.SECONDS)).isTrue();
		Thread.sleep(400);
		assertThat(this.executor.execute(policy, "k", key, fingerprint, () -> "new owner", null))
			.isEqualTo("new owner");
		assertThat(slow.get(5, TimeUnit.SECONDS)).isEqualTo("slow owner");
		// The slow owner's complete was fenced off: the new owner's result stays.
		assertThat(this.executor.execute(policy, "k", key, fingerprint, () -> "must not run", null))
			.isEqualTo("new owner");
		assertThat(this.leaseLost.get()).isEqualTo(1);
	}

	@Test
	void renewalsThatFailAreRetriedSoonEnoughToKeepTheLease() throws Throwable {
		// The first three renewals fail at once. Tried again only a renewal period (a
		// third of the lease) after each failure, the fourth would come a third of a
		// lease after the lease's end.
		AtomicInteger failuresLeft = new AtomicInteger(3);
		IdempotencyStore store = new FailingRenewals(this.memory, failuresLeft);
		this.executor = new IdempotencyExecutor(store, FailureMode.CLOSED, 1024, this.observer);
		IdempotencyPolicy policy = policy(Duration.ofMillis(900));
		RecordKey key = new RecordKey("test:failing-renewals");
		Fingerprint fingerprint = new Fingerprint("fp");
		CountDownLatch started = new CountDownLatch(1);
		CountDownLatch finish = new CountDownLatch(1);
		AtomicInteger runs = new AtomicInteger();
		CompletableFuture<Object> owner = CompletableFuture.supplyAsync(() -> {
			try {
				return this.executor.execute(policy, "k", key, fingerprint, () -> {
					runs.incrementAndGet();
					started.countDown();
					finish.await(10, TimeUnit.SECONDS);
					return "owner";
				}, null);
			}
			catch (Throwable ex) {
				throw new IllegalStateException(ex);
			}
		});
		assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
		long claimed = System.nanoTime();
		Thread.sleep(950);
		while (System.nanoTime() - claimed < TimeUnit.MILLISECONDS.toNanos(1150)) {
			assertThatExceptionOfType(IdempotencyInProgressException.class).isThrownBy(
					() -> this.executor.execute(policy, "k", key, fingerprint, () -> runs.incrementAndGet(), null));
			Thread.sleep(20);
		}
		finish.countDown();
		assertThat(owner.get(5, TimeUnit.SECONDS)).isEqualTo("owner");
		assertThat(failuresLeft).hasValue(0);
		assertThat(runs).hasValue(1);
		assertThat(this.leaseLost).hasValue(0);
	}

	@Test
	void aResultAboveTheSizeLimitIsReturnedOnceAndRetriesGetAClearError() throws Throwable {
		this.executor = new IdempotencyExecutor(this.memory, FailureMode.CLOSED, 64, this.observer);
		IdempotencyPolicy policy = policy(Duration.ofSeconds(30));
		RecordKey key = new RecordKey("test:too-large");
		Fingerprint fingerprint = new Fingerprint("fp");
		String large = "x".repeat(100);
		AtomicInteger runs = new AtomicInteger();
		assertThat(this.executor.execute(policy, "k", key, fingerprint, () -> {
			runs.incrementAndGet();
			return large;
		}, null)).isEqualTo(large);
		assertThatExceptionOfType(IdempotencyResultException.class)
			.isThrownBy(() -> this.executor.execute(policy, "k", key, fingerprint, () -> runs.incrementAndGet(), null))
			.withMessageContaining("max-result-size");
		assertThat(runs.get()).isEqualTo(1);
	}

	@Test
	void aWaitingDuplicateTakesOverWhenTheFirstCallFails() throws Throwable {
		this.executor = new IdempotencyExecutor(this.memory, FailureMode.CLOSED, 1024, this.observer);
		IdempotencyPolicy policy = new IdempotencyPolicy("op", Duration.ofMinutes(1), Duration.ofSeconds(30),
				Duration.ofSeconds(5), Duration.ofSeconds(1), List.of(), codec());
		RecordKey key = new RecordKey("test:take-over");
		Fingerprint fingerprint = new Fingerprint("fp");
		CountDownLatch firstStarted = new CountDownLatch(1);
		CompletableFuture<Object> first = CompletableFuture.supplyAsync(() -> {
			try {
				return this.executor.execute(policy, "k", key, fingerprint, () -> {
					firstStarted.countDown();
					Thread.sleep(300);
					throw new IllegalStateException("first failed");
				}, null);
			}
			catch (Throwable ex) {
				return ex;
			}
		});
		assertThat(firstStarted.await(5, TimeUnit.SECONDS)).isTrue();
		assertThat(this.executor.execute(policy, "k", key, fingerprint, () -> "second ran", null))
			.isEqualTo("second ran");
		assertThat(first.get(5, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class);
	}

	@Test
	void aDuplicateWhoseReclaimFailsWhileTheApplicationShutsDownIsToldToRetryLater() throws Throwable {
		// The connection is closed under the duplicate's re-claim, as when the store
		// client shuts down with the application: the re-claim fails with whatever the
		// client throws for that, which says nothing of an outage.
		AtomicInteger claims = new AtomicInteger();
		IdempotencyStore store = new ForwardingIdempotencyStore(this.memory) {

			@Override
			public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
				if (claims.incrementAndGet() == 3) {
					IdempotencyExecutorTests.this.executor.stopWaiting();
					throw new IllegalStateException("Connection closed");
				}
				return super.claim(key, fingerprint, lease);
			}

		};
		this.executor = new IdempotencyExecutor(store, FailureMode.CLOSED, 1024, this.observer);
		IdempotencyPolicy policy = new IdempotencyPolicy("op", Duration.ofMinutes(1), Duration.ofSeconds(30),
				Duration.ofSeconds(5), Duration.ofSeconds(1), List.of(), codec());
		RecordKey key = new RecordKey("test:shutdown");
		Fingerprint fingerprint = new Fingerprint("fp");
		CountDownLatch firstRuns = new CountDownLatch(1);
		CountDownLatch firstMayReturn = new CountDownLatch(1);
		CompletableFuture<Object> first = CompletableFuture.supplyAsync(() -> {
			try {
				return this.executor.execute(policy, "k", key, fingerprint, () -> {
					firstRuns.countDown();
					firstMayReturn.await(10, TimeUnit.SECONDS);
					return "first";
				}, null);
			}
			catch (Throwable ex) {
				throw new IllegalStateException(ex);
			}
		});
		assertThat(firstRuns.await(5, TimeUnit.SECONDS)).isTrue();
		assertThatExceptionOfType(IdempotencyStoreUnavailableException.class)
			.isThrownBy(() -> this.executor.execute(policy, "k", key, fingerprint, () -> "must not run", null));
		// Again for a future, on an executor that is not stopping yet.
		IdempotencyExecutor stopped = this.executor;
		this.executor = new IdempotencyExecutor(store, FailureMode.CLOSED, 1024, this.observer);
		claims.set(1);
		assertThat(this.executor.executeAsync(policy, "k", key, fingerprint, () -> {
			throw new AssertionError("must not run");
		}, null)).failsWithin(Duration.ofSeconds(10))
			.withThrowableThat()
			.withCauseInstanceOf(IdempotencyStoreUnavailableException.class);
		firstMayReturn.countDown();
		assertThat(first.get(5, TimeUnit.SECONDS)).isEqualTo("first");
		stopped.close();
	}

	@Test
	void anObservedCallTellsTheExecutorsObserverOnce() throws Throwable {
		AtomicInteger executed = new AtomicInteger();
		this.executor = new IdempotencyExecutor(this.memory, FailureMode.CLOSED, 1024, new IdempotencyObserver() {

			@Override
			public void executed(IdempotencyPolicy policy, String key) {
				executed.incrementAndGet();
			}

		});
		ObservationRegistry registry = ObservationRegistry.create();
		registry.observationConfig().observationHandler((context) -> true);
		this.executor.observeWith(registry, null, false);
		this.executor.execute(policy(Duration.ofSeconds(5)), "k", new RecordKey("test:observed-once"),
				new Fingerprint("fp"), () -> "done", null);
		assertThat(executed).hasValue(1);
	}

	@Test
	void anAdmittedCallRunsOnceAndItsDuplicateIsAnsweredWithTheStoredResult() throws Throwable {
		this.executor = new IdempotencyExecutor(this.memory, FailureMode.CLOSED, 1024, this.observer);
		IdempotencyPolicy policy = policy(Duration.ofSeconds(30));
		RecordKey key = new RecordKey("test:admitted");
		Fingerprint fingerprint = new Fingerprint("fp");
		try (IdempotencyExecutor.Admission call = this.executor.admit(policy, "k", key, fingerprint, null)) {
			assertThat(call.isAnswered()).isFalse();
			assertThat(IdempotencyContext.current())
				.hasValueSatisfying((context) -> assertThat(context.getKey()).isEqualTo("k"));
			call.returned("ran once");
			assertThat(IdempotencyContext.current()).isEmpty();
		}
		try (IdempotencyExecutor.Admission duplicate = this.executor.admit(policy, "k", key, fingerprint, null)) {
			assertThat(duplicate.isAnswered()).isTrue();
			assertThat(duplicate.answer()).isEqualTo("ran once");
			assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> duplicate.returned("again"));
		}
	}

	@Test
	void anAdmittedCallClosedWithoutItsOutcomeLetsItsKeyGoAtOnce() throws Throwable {
		this.executor = new IdempotencyExecutor(this.memory, FailureMode.CLOSED, 1024, this.observer);
		IdempotencyPolicy policy = policy(Duration.ofMinutes(10));
		RecordKey key = new RecordKey("test:abandoned");
		Fingerprint fingerprint = new Fingerprint("fp");
		this.executor.admit(policy, "k", key, fingerprint, null).close();
		assertThat(this.executor.execute(policy, "k", key, fingerprint, () -> "retry ran", null))
			.isEqualTo("retry ran");
	}

	@Test
	void aCallThatFailsAsItsOutcomeIsStoredEndsItsObservationWithThatFailure() throws Throwable {
		AssertionError observerFailure = new AssertionError("observer broke");
		this.executor = new IdempotencyExecutor(this.memory, FailureMode.CLOSED, 1024, new IdempotencyObserver() {

			@Override
			public void executed(IdempotencyPolicy policy, String key) {
				throw observerFailure;
			}

		});
		List<Throwable> observedErrors = new CopyOnWriteArrayList<>();
		ObservationRegistry registry = ObservationRegistry.create();
		registry.observationConfig().observationHandler(new ObservationHandler<>() {

			@Override
			public boolean supportsContext(Observation.Context context) {
				return true;
			}

			@Override
			public void onStop(Observation.Context context) {
				observedErrors.add((context.getError() != null) ? context.getError() : new NullPointerException());
			}

		});
		this.executor.observeWith(registry, null, false);
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> this.executor.execute(policy(Duration.ofSeconds(5)), "k",
					new RecordKey("test:observer-broke"), new Fingerprint("fp"), () -> "done", null))
			.isSameAs(observerFailure);
		assertThat(observedErrors).containsExactly(observerFailure);
	}

	private static IdempotencyPolicy policy(Duration lease) {
		return new IdempotencyPolicy("op", Duration.ofMinutes(1), lease, Duration.ZERO, Duration.ofSeconds(1),
				List.of(), codec());
	}

	private static ResultCodec.Binding codec() {
		return new JacksonResultCodec(new JsonMapper()).bind(ResolvableType.forClass(String.class));
	}

	private static final class RefusingRenewals extends ForwardingIdempotencyStore {

		RefusingRenewals(IdempotencyStore delegate) {
			super(delegate);
		}

		@Override
		public boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease) {
			throw new IllegalStateException("store unreachable");
		}

	}

	private static final class FailingRenewals extends ForwardingIdempotencyStore {

		private final AtomicInteger failuresLeft;

		FailingRenewals(IdempotencyStore delegate, AtomicInteger failuresLeft) {
			super(delegate);
			this.failuresLeft = failuresLeft;
		}

		@Override
		public boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease) {
			if (this.failuresLeft.getAndUpdate((n) -> Math.max(0, n - 1)) > 0) {
				throw new IllegalStateException("store unreachable");
			}
			return super.renew(key, token, fingerprint, lease);
		}

	}

}
