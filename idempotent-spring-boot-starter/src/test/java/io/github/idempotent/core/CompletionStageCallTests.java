package io.github.idempotent.core;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.github.idempotent.annotation.DuplicateHandling;
import io.github.idempotent.core.IdempotencyExecutor.ResponseCapture;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;
import io.github.idempotent.testsupport.ForwardingIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A guarded method that returns a future ({@link CompletionStageCall}), as its callers
 * see it: through {@link IdempotencyExecutor#executeAsync} (the first claim on the
 * caller's thread) and {@link IdempotencyExecutor#executeNonBlocking} (an event loop's),
 * on the in-memory store.
 */
class CompletionStageCallTests {

	private static final Fingerprint FP = new Fingerprint("fp");

	private final InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore();

	private final AtomicBoolean down = new AtomicBoolean();

	private IdempotencyExecutor executor = executor(FailureMode.CLOSED);

	@AfterEach
	void close() {
		this.executor.close();
	}

	@ParameterizedTest
	@ValueSource(booleans = { false, true })
	void aDuplicateOfACallInProgressWaitsForItAndGetsItsResult(boolean nonBlocking) {
		IdempotencyPolicy policy = policy(Duration.ofSeconds(10));
		CompletableFuture<String> payment = new CompletableFuture<>();
		AtomicInteger runs = new AtomicInteger();
		CompletableFuture<Object> first = call(nonBlocking, policy, "order-1", () -> {
			runs.incrementAndGet();
			return payment;
		});
		// A non-blocking first call claims on another thread: the duplicate follows its
		// run.
		await().until(() -> runs.get() == 1);
		CompletableFuture<Object> duplicate = call(nonBlocking, policy, "order-1", () -> {
			runs.incrementAndGet();
			return CompletableFuture.completedFuture("must not run");
		});
		assertThat(duplicate).isNotDone();
		payment.complete("receipt");
		assertThat(first).succeedsWithin(Duration.ofSeconds(10)).isEqualTo("receipt");
		assertThat(duplicate).succeedsWithin(Duration.ofSeconds(10)).isEqualTo("receipt");
		assertThat(runs).hasValue(1);
	}

	@ParameterizedTest
	@ValueSource(booleans = { false, true })
	void aFailedFutureReleasesTheKeySoThatARetryRuns(boolean nonBlocking) {
		IdempotencyPolicy policy = policy(Duration.ZERO);
		assertThat(call(nonBlocking, policy, "order-2",
				() -> CompletableFuture.failedFuture(new IllegalStateException("card declined"))))
			.failsWithin(Duration.ofSeconds(10))
			.withThrowableThat()
			.havingRootCause()
			.withMessage("card declined");
		assertThat(call(nonBlocking, policy, "order-2", () -> CompletableFuture.completedFuture("paid on retry")))
			.succeedsWithin(Duration.ofSeconds(10))
			.isEqualTo("paid on retry");
	}

	@Test
	void aFailedFutureOfARecordedCallReleasesTheKeyRatherThanWaitForAResponse() {
		ResponseCapture capture = new ResponseCapture();
		assertThat(this.executor.executeAsync(policy(Duration.ZERO), "order-3", new RecordKey("order-3"), FP,
				() -> CompletableFuture.failedFuture(new IllegalStateException("card declined")), capture))
			.failsWithin(Duration.ofSeconds(10));
		assertThat(capture.take()).isNull();
		assertThat(this.memory.inspect(new RecordKey("order-3"))).isEmpty();
	}

	@Test
	void aHoldThatComesAfterItsRequestEndedKeepsTheKeyAsRunWithoutAResponse() {
		ResponseCapture capture = new ResponseCapture();
		// The request was over before the future completed (an async request that timed
		// out): nobody will end the hold, and the method ran.
		assertThat(capture.take()).isNull();
		assertThat(this.executor.executeAsync(policy(Duration.ZERO), "order-5", new RecordKey("order-5"), FP,
				() -> CompletableFuture.completedFuture("paid"), capture))
			.succeedsWithin(Duration.ofSeconds(10));
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(this.memory.inspect(new RecordKey("order-5"))).hasValueSatisfying(
					(record) -> assertThat(record.state()).isEqualTo(IdempotencyRecord.State.COMPLETED)));
	}

	@ParameterizedTest
	@ValueSource(booleans = { false, true })
	void aMethodThatReturnsNullInsteadOfAFutureIsToldSoAndItsKeyIsFreed(boolean nonBlocking) {
		IdempotencyPolicy policy = policy(Duration.ZERO);
		assertThat(call(nonBlocking, policy, "order-4", () -> null)).failsWithin(Duration.ofSeconds(10))
			.withThrowableThat()
			.havingRootCause()
			.isInstanceOf(IllegalStateException.class)
			.withMessageContaining("returned null instead of a future");
		assertThat(this.memory.inspect(new RecordKey("order-4"))).isEmpty();
	}

	@ParameterizedTest
	@ValueSource(booleans = { false, true })
	void aFirstClaimThatCannotReachTheStoreIsRefusedUnlessFailureModeIsOpen(boolean nonBlocking) {
		this.down.set(true);
		IdempotencyPolicy policy = policy(Duration.ZERO);
		AtomicInteger runs = new AtomicInteger();
		assertThat(call(nonBlocking, policy, "order-5", () -> {
			runs.incrementAndGet();
			return CompletableFuture.completedFuture("unprotected");
		})).failsWithin(Duration.ofSeconds(10))
			.withThrowableThat()
			.havingCause()
			.isInstanceOf(IdempotencyStoreUnavailableException.class);
		assertThat(runs).hasValue(0);
		this.executor.close();
		this.executor = executor(FailureMode.OPEN);
		assertThat(call(nonBlocking, policy, "order-5", () -> {
			runs.incrementAndGet();
			return CompletableFuture.completedFuture("unprotected");
		})).succeedsWithin(Duration.ofSeconds(10)).isEqualTo("unprotected");
		assertThat(runs).hasValue(1);
	}

	@ParameterizedTest
	@ValueSource(booleans = { false, true })
	void aFlaggedDuplicateRunsWithTheDuplicatesContextAndLeavesTheFirstResult(boolean nonBlocking) {
		IdempotencyPolicy replaying = policy(Duration.ZERO);
		IdempotencyPolicy flagging = new IdempotencyPolicy("op", Duration.ofMinutes(1), Duration.ofSeconds(30),
				Duration.ZERO, Duration.ofSeconds(1), List.of(), OwnerHandleTests.codec(),
				IdempotencyPolicy.DEFAULT_MAX_DURATION, DuplicateHandling.FLAG);
		assertThat(call(nonBlocking, flagging, "order-6", () -> CompletableFuture.completedFuture("receipt")))
			.succeedsWithin(Duration.ofSeconds(10));
		assertThat(call(nonBlocking, flagging, "order-6",
				() -> CompletableFuture
					.completedFuture(IdempotencyContext.current().map(IdempotencyContext::isDuplicate).orElse(false)
							? "flagged" : "not flagged")))
			.succeedsWithin(Duration.ofSeconds(10))
			.isEqualTo("flagged");
		assertThat(call(nonBlocking, replaying, "order-6", () -> CompletableFuture.completedFuture("must not run")))
			.succeedsWithin(Duration.ofSeconds(10))
			.isEqualTo("receipt");
	}

	@Test
	void aCallWhoseStoreAnswersAfterTheExecutorClosedStillCompletes() throws InterruptedException {
		CountDownLatch completing = new CountDownLatch(1);
		CountDownLatch answer = new CountDownLatch(1);
		this.executor.close();
		this.executor = new IdempotencyExecutor(new ForwardingIdempotencyStore(this.memory) {

			@Override
			public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result,
					Duration ttl) {
				completing.countDown();
				try {
					answer.await();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				return super.complete(key, token, fingerprint, result, ttl);
			}

		}, FailureMode.CLOSED, 1 << 16, IdempotencyObserver.NONE);
		CompletableFuture<Object> paid = call(false, policy(Duration.ZERO), "order-9",
				() -> CompletableFuture.completedFuture("receipt"));
		assertThat(completing.await(10, TimeUnit.SECONDS)).isTrue();
		// The application shuts down while the store takes the result: the threads that
		// would carry the answer to the caller are gone by the time it arrives.
		this.executor.close();
		answer.countDown();
		assertThat(paid).succeedsWithin(Duration.ofSeconds(10)).isEqualTo("receipt");
		assertThat(this.memory.claim(new RecordKey("order-9"), FP, Duration.ofSeconds(30)))
			.isInstanceOf(ClaimResult.Completed.class);
	}

	private CompletableFuture<Object> call(boolean nonBlocking, IdempotencyPolicy policy, String key,
			IdempotencyExecutor.AsyncInvocation method) {
		return nonBlocking
				? this.executor.executeNonBlocking(
						this.executor.call(policy, key, new RecordKey(key), FP, null, null, false), method,
						ForkJoinPool.commonPool())
				: this.executor.executeAsync(policy, key, new RecordKey(key), FP, method, null);
	}

	private IdempotencyExecutor executor(FailureMode failureMode) {
		return new IdempotencyExecutor(new ForwardingIdempotencyStore(this.memory) {

			@Override
			public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
				if (CompletionStageCallTests.this.down.get()) {
					throw new UncheckedIOException(new IOException("connection refused"));
				}
				return super.claim(key, fingerprint, lease);
			}

		}, failureMode, 1 << 16, IdempotencyObserver.NONE);
	}

	private static IdempotencyPolicy policy(Duration waitFor) {
		return new IdempotencyPolicy("op", Duration.ofMinutes(1), Duration.ofSeconds(30), waitFor,
				Duration.ofSeconds(1), List.of(), OwnerHandleTests.codec());
	}

}
