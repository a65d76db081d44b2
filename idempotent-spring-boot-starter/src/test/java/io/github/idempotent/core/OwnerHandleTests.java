package io.github.idempotent.core;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.ResolvableType;

import io.github.idempotent.core.IdempotencyExecutor.Hold;
import io.github.idempotent.core.IdempotencyExecutor.ResponseCapture;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.InspectableIdempotencyStore.Deletion;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoreFullException;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;
import io.github.idempotent.testsupport.ForwardingIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The winner's hold on a key ({@link OwnerHandle}) as its callers see it, on the
 * in-memory store: a completion is stored and replayed, a release frees the key, a step
 * the store could not confirm is sent again, and an owner whose key was taken from it
 * never writes over the newer owner's record. Each case runs on the blocking path and on
 * the future's completion signal, which end the hold through different methods.
 */
class OwnerHandleTests {

	private static final Fingerprint FP = new Fingerprint("fp");

	private static final Duration LEASE = Duration.ofSeconds(30);

	/**
	 * A thread per task: the common pool has a single thread on two cores, which a call
	 * that waits for another would hold.
	 */
	static final Executor THREADS = (task) -> {
		Thread thread = new Thread(task);
		thread.setDaemon(true);
		thread.start();
	};

	private final InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore();

	private final AtomicInteger leaseLost = new AtomicInteger();

	private final List<IdempotencyObserver.Step> steps = new CopyOnWriteArrayList<>();

	private final IdempotencyObserver observer = new IdempotencyObserver() {

		@Override
		public void leaseLost(IdempotencyPolicy policy, String key) {
			OwnerHandleTests.this.leaseLost.incrementAndGet();
		}

		@Override
		public void step(IdempotencyPolicy policy, String key, Step step) {
			OwnerHandleTests.this.steps.add(step);
		}

	};

	private IdempotencyExecutor executor = new IdempotencyExecutor(this.memory, FailureMode.CLOSED, 1 << 16,
			this.observer);

	@AfterEach
	void close() {
		this.executor.close();
	}

	@ParameterizedTest
	@EnumSource
	void completeStoresTheResultAndARetryReplaysIt(Path path) throws Throwable {
		IdempotencyPolicy policy = policy();
		AtomicInteger runs = new AtomicInteger();
		assertThat(path.call(this.executor, policy, "order-1", () -> "receipt-" + runs.incrementAndGet()))
			.isEqualTo("receipt-1");
		assertThat(path.call(this.executor, policy, "order-1", () -> "receipt-" + runs.incrementAndGet()))
			.isEqualTo("receipt-1");
		assertThat(runs).hasValue(1);
		assertThat(this.memory.claim(new RecordKey("order-1"), FP, LEASE)).isInstanceOf(ClaimResult.Completed.class);
	}

	@ParameterizedTest
	@EnumSource
	void releaseFreesTheKeySoThatARetryRuns(Path path) throws Throwable {
		IdempotencyPolicy policy = policy();
		IllegalStateException declined = new IllegalStateException("card declined");
		assertThatIllegalStateException().isThrownBy(() -> path.call(this.executor, policy, "order-2", () -> {
			throw declined;
		})).isSameAs(declined);
		assertThat(this.memory.inspect(new RecordKey("order-2"))).isEmpty();
		assertThat(path.call(this.executor, policy, "order-2", () -> "paid on retry")).isEqualTo("paid on retry");
	}

	@ParameterizedTest
	@EnumSource
	void aFailureListedInCacheForIsStoredAndRetriesGetItInsteadOfARun(Path path) throws Throwable {
		IdempotencyPolicy policy = new IdempotencyPolicy("op", Duration.ofMinutes(1), LEASE, Duration.ZERO,
				Duration.ofSeconds(1), List.of(IllegalArgumentException.class), codec());
		AtomicInteger runs = new AtomicInteger();
		Callable<Object> invalid = () -> {
			runs.incrementAndGet();
			throw new IllegalArgumentException("unknown currency");
		};
		assertThatIllegalArgumentException().isThrownBy(() -> path.call(this.executor, policy, "order-3", invalid))
			.withMessage("unknown currency");
		assertThatIllegalArgumentException().isThrownBy(() -> path.call(this.executor, policy, "order-3", invalid))
			.withMessage("unknown currency");
		assertThat(runs).hasValue(1);
	}

	@ParameterizedTest
	@EnumSource
	void aCompletionTheStoreDidNotConfirmIsSentAgainAndStored(Path path) throws Throwable {
		this.executor.close();
		this.executor = new IdempotencyExecutor(new Unreachable(this.memory, 1, 0), FailureMode.CLOSED, 1 << 16,
				this.observer);
		IdempotencyPolicy policy = policy();
		AtomicInteger runs = new AtomicInteger();
		assertThat(path.call(this.executor, policy, "order-4", () -> "receipt-" + runs.incrementAndGet()))
			.isEqualTo("receipt-1");
		assertThat(path.call(this.executor, policy, "order-4", () -> "receipt-" + runs.incrementAndGet()))
			.isEqualTo("receipt-1");
		assertThat(runs).hasValue(1);
		assertThat(this.leaseLost).hasValue(0);
	}

	@ParameterizedTest
	@EnumSource
	void aReleaseTheStoreDidNotConfirmIsSentAgainAndFreesTheKey(Path path) throws Throwable {
		this.executor.close();
		this.executor = new IdempotencyExecutor(new Unreachable(this.memory, 0, 1), FailureMode.CLOSED, 1 << 16,
				this.observer);
		IdempotencyPolicy policy = policy();
		assertThatIllegalStateException().isThrownBy(() -> path.call(this.executor, policy, "order-5", () -> {
			throw new IllegalStateException("card declined");
		})).satisfies((ex) -> assertThat(ex.getSuppressed()).isEmpty());
		assertThat(this.memory.inspect(new RecordKey("order-5"))).isEmpty();
		assertThat(this.leaseLost).hasValue(0);
	}

	@ParameterizedTest
	@EnumSource
	void anOwnerWhoseKeyWasTakenDoesNotOverwriteTheNewerOwnersResult(Path path) throws Throwable {
		IdempotencyPolicy policy = policy();
		RecordKey key = new RecordKey("order-6");
		assertThat(path.call(this.executor, policy, "order-6", () -> {
			// An operator deletes the placeholder while the call runs, and a retry takes
			// the key and completes before the first call returns.
			assertThat(this.memory.deleteInProgress(key)).isEqualTo(Deletion.DELETED);
			assertThat(CompletableFuture
				.supplyAsync(() -> uncheckedCall(Path.BLOCKING, policy, "order-6", () -> "newer receipt"), THREADS)
				.get(10, TimeUnit.SECONDS)).isEqualTo("newer receipt");
			return "older receipt";
		})).isEqualTo("older receipt");
		assertThat(path.call(this.executor, policy, "order-6", () -> "must not run")).isEqualTo("newer receipt");
		assertThat(this.leaseLost).hasValue(1);
	}

	@ParameterizedTest
	@EnumSource
	void anOwnerWhoseKeyWasTakenAndThatFailsLeavesTheNewerOwnersPlaceholder(Path path) throws Throwable {
		IdempotencyPolicy policy = policy();
		RecordKey key = new RecordKey("order-7");
		CountDownLatch newerStarted = new CountDownLatch(1);
		CountDownLatch newerMayReturn = new CountDownLatch(1);
		CompletableFuture<Object> newer = new CompletableFuture<>();
		assertThatIllegalStateException().isThrownBy(() -> path.call(this.executor, policy, "order-7", () -> {
			assertThat(this.memory.deleteInProgress(key)).isEqualTo(Deletion.DELETED);
			THREADS.execute(() -> newer.complete(uncheckedCall(Path.BLOCKING, policy, "order-7", () -> {
				newerStarted.countDown();
				newerMayReturn.await(10, TimeUnit.SECONDS);
				return "newer receipt";
			})));
			assertThat(newerStarted.await(10, TimeUnit.SECONDS)).isTrue();
			throw new IllegalStateException("older call failed");
		}));
		// The older owner's release was fenced by its token: the newer call still holds
		// the key.
		assertThatExceptionOfType(IdempotencyInProgressException.class)
			.isThrownBy(() -> path.call(this.executor, policy, "order-7", () -> "must not run"));
		newerMayReturn.countDown();
		assertThat(newer.get(10, TimeUnit.SECONDS)).isEqualTo("newer receipt");
		assertThat(path.call(this.executor, policy, "order-7", () -> "must not run")).isEqualTo("newer receipt");
		// The refused release told the operator that the call lost its key.
		assertThat(this.leaseLost).hasValue(1);
	}

	@ParameterizedTest
	@EnumSource
	void anObserverSeesAFailedCallReleaseItsKey(Path path) throws Throwable {
		assertThatIllegalStateException().isThrownBy(() -> path.call(this.executor, policy(), "order-18", () -> {
			throw new IllegalStateException("card declined");
		}));
		assertThat(this.steps).endsWith(IdempotencyObserver.Step.RELEASING)
			.doesNotContain(IdempotencyObserver.Step.COMPLETING);
	}

	@ParameterizedTest
	@EnumSource
	void aRetriedCompletionThatBreaksReachesTheCallerInsteadOfHangingIt(Path path) throws Throwable {
		AtomicInteger attempts = new AtomicInteger();
		this.executor.close();
		this.executor = new IdempotencyExecutor(new ForwardingIdempotencyStore(this.memory) {

			@Override
			public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result,
					Duration ttl) {
				if (attempts.incrementAndGet() == 1) {
					throw new UncheckedIOException(new IOException("connection reset"));
				}
				throw new AssertionError("driver broken");
			}

		}, FailureMode.CLOSED, 1 << 16, this.observer);
		IdempotencyPolicy policy = policy();
		CompletableFuture<Object> call = CompletableFuture
			.supplyAsync(() -> uncheckedCall(path, policy, "order-8", () -> "receipt"), THREADS);
		if (path == Path.BLOCKING) {
			// As from the first attempt: the caller's thread gets what the driver threw.
			assertThat(call).failsWithin(Duration.ofSeconds(10))
				.withThrowableThat()
				.havingRootCause()
				.isInstanceOf(AssertionError.class)
				.withMessage("driver broken");
		}
		else {
			// The result went to the caller's future; the store's failure is logged.
			assertThat(call).succeedsWithin(Duration.ofSeconds(10)).isEqualTo("receipt");
		}
		assertThat(attempts).hasValueGreaterThanOrEqualTo(2);
	}

	@Test
	void theRetriesOfABlockingCompletionDoNotNestOnTheCallersStack() throws Throwable {
		List<Integer> depths = new CopyOnWriteArrayList<>();
		this.executor.close();
		this.executor = new IdempotencyExecutor(new Unreachable(this.memory, 6, 0) {

			@Override
			public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result,
					Duration ttl) {
				depths.add(Thread.currentThread().getStackTrace().length);
				return super.complete(key, token, fingerprint, result, ttl);
			}

		}, FailureMode.CLOSED, 1 << 16, this.observer);
		assertThat(Path.BLOCKING.call(this.executor, policy(), "order-9", () -> "receipt")).isEqualTo("receipt");
		assertThat(depths).hasSize(7);
		assertThat(depths.subList(1, 7)).allMatch((depth) -> depth.equals(depths.get(1)));
		assertThat(Path.BLOCKING.call(this.executor, policy(), "order-9", () -> "must not run")).isEqualTo("receipt");
	}

	@Test
	void aRecordedResponseIsStoredWhenItsRecorderEndsTheHoldAndIsReplayedToARetry() throws Throwable {
		Recorder recorder = new Recorder();
		RecordedResponse created = new RecordedResponse(201, Map.of("Location", List.of("/orders/10")),
				"{\"id\":10}".getBytes(StandardCharsets.UTF_8));
		assertThat(recorder.call(this.executor, policy(), "order-10", () -> "returned")).isEqualTo("returned");
		// Until the response is written, a retry finds the call in progress.
		assertThatExceptionOfType(IdempotencyInProgressException.class)
			.isThrownBy(() -> new Recorder().call(this.executor, policy(), "order-10", () -> "must not run"));
		recorder.hold.end(201, created, null, null).join();
		Recorder retry = new Recorder();
		assertThat(retry.call(this.executor, policy(), "order-10", () -> "must not run")).isEqualTo("replayed");
		assertThat(retry.replayed).isEqualTo(created);
	}

	@Test
	void aRecordedStatusThatReleasesFreesTheKeyForARetry() throws Throwable {
		Recorder recorder = new Recorder();
		recorder.call(this.executor, policy(), "order-11", () -> "returned");
		recorder.hold.end(503, new RecordedResponse(503, Map.of(), new byte[0]), null, null).join();
		assertThat(this.memory.inspect(new RecordKey("order-11"))).isEmpty();
		assertThat(new Recorder().call(this.executor, policy(), "order-11", () -> "ran again")).isEqualTo("ran again");
	}

	@Test
	void aResponseThatCouldNotBeRecordedTellsRetriesTheCallCompletedInsteadOfRunningItAgain() throws Throwable {
		Recorder recorder = new Recorder();
		recorder.call(this.executor, policy(), "order-12", () -> "returned");
		recorder.hold.end(200, null, "its response was a stream of events", null).join();
		assertThatExceptionOfType(IdempotencyResultException.class)
			.isThrownBy(() -> new Recorder().call(this.executor, policy(), "order-12", () -> "must not run"));
	}

	@Test
	void aCallWhoseResultFailedAfterItReturnedIsReleasedWhateverWasWritten() throws Throwable {
		Recorder recorder = new Recorder();
		recorder.call(this.executor, policy(), "order-13", () -> "returned");
		recorder.hold
			.end(200, new RecordedResponse(200, Map.of(), new byte[0]), null, new IllegalStateException("declined"))
			.join();
		assertThat(this.memory.inspect(new RecordKey("order-13"))).isEmpty();
	}

	@ParameterizedTest
	@EnumSource
	void aReleaseWhoseAnswerWasLostIsSentAgainWithoutReportingALostLease(Path path) throws Throwable {
		failWithTheFirstReleaseAnswerLost(path, "order-14", false);
		assertThat(path.call(this.executor, policy(), "order-14", () -> "paid on retry")).isEqualTo("paid on retry");
	}

	@ParameterizedTest
	@EnumSource
	void aReleaseSentAgainAfterARetryClaimedTheKeyReportsNoLostLease(Path path) throws Throwable {
		failWithTheFirstReleaseAnswerLost(path, "order-19", true);
	}

	/**
	 * Fails a call whose first release frees the key but whose answer is lost, and, when
	 * {@code retryClaims}, lets a retry claim the key before the release is sent again.
	 */
	private void failWithTheFirstReleaseAnswerLost(Path path, String key, boolean retryClaims) throws Throwable {
		AtomicInteger releases = new AtomicInteger();
		this.executor.close();
		this.executor = new IdempotencyExecutor(new ForwardingIdempotencyStore(this.memory) {

			@Override
			public boolean release(RecordKey key, String token) {
				boolean released = super.release(key, token);
				if (releases.incrementAndGet() == 1) {
					if (retryClaims) {
						OwnerHandleTests.this.memory.claim(key, FP, LEASE);
					}
					throw new UncheckedIOException(new IOException("connection reset"));
				}
				return released;
			}

		}, FailureMode.CLOSED, 1 << 16, this.observer);
		assertThatIllegalStateException().isThrownBy(() -> path.call(this.executor, policy(), key, () -> {
			throw new IllegalStateException("card declined");
		}));
		assertThat(releases).hasValue(2);
		assertThat(this.leaseLost).hasValue(0);
	}

	@ParameterizedTest
	@EnumSource
	void aCompletionTheStoreRejectsIsNotSentAgainAndRetriesLearnTheCallCompleted(Path path) throws Throwable {
		AtomicInteger completions = new AtomicInteger();
		this.executor.close();
		this.executor = new IdempotencyExecutor(new ForwardingIdempotencyStore(this.memory) {

			@Override
			public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result,
					Duration ttl) {
				if (completions.incrementAndGet() == 1) {
					// The store answered: sending the same result again fails the same
					// way.
					throw new IllegalArgumentException("value rejected");
				}
				return super.complete(key, token, fingerprint, result, ttl);
			}

		}, FailureMode.CLOSED, 1 << 16, this.observer);
		AtomicInteger runs = new AtomicInteger();
		assertThat(path.call(this.executor, policy(), "order-15", () -> "receipt-" + runs.incrementAndGet()))
			.isEqualTo("receipt-1");
		// Once for the result, once for the record that says it completed without one.
		assertThat(completions).hasValue(2);
		assertThatExceptionOfType(IdempotencyResultException.class).isThrownBy(
				() -> path.call(this.executor, policy(), "order-15", () -> "receipt-" + runs.incrementAndGet()));
		assertThat(runs).hasValue(1);
	}

	@ParameterizedTest
	@EnumSource
	void aCompletionRefusedAsFullIsSentAgainPastOneLeaseWhileTheLeaseStaysRenewed(Path path) throws Throwable {
		Duration lease = Duration.ofMillis(300);
		AtomicLong fullUntil = new AtomicLong();
		this.executor.close();
		this.executor = new IdempotencyExecutor(new ForwardingIdempotencyStore(this.memory) {

			@Override
			public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result,
					Duration ttl) {
				// Full for three leases from the first refusal; renewals still land, as
				// on a
				// Redis under noeviction.
				fullUntil.compareAndSet(0, System.nanoTime() + 3 * lease.toNanos());
				if (System.nanoTime() < fullUntil.get()) {
					throw new StoreFullException("no room for the result");
				}
				return super.complete(key, token, fingerprint, result, ttl);
			}

		}, FailureMode.CLOSED, 1 << 16, this.observer);
		IdempotencyPolicy policy = new IdempotencyPolicy("op", Duration.ofMinutes(1), lease, Duration.ZERO,
				Duration.ofSeconds(1), List.of(), codec(), Duration.ofSeconds(30));
		AtomicInteger runs = new AtomicInteger();
		assertThat(path.call(this.executor, policy, "order-16", () -> "receipt-" + runs.incrementAndGet()))
			.isEqualTo("receipt-1");
		assertThat(path.call(this.executor, policy, "order-16", () -> "receipt-" + runs.incrementAndGet()))
			.isEqualTo("receipt-1");
		assertThat(runs).hasValue(1);
	}

	@ParameterizedTest
	@EnumSource
	void aCompletionThatCannotReachTheStoreForALeaseIsGivenUpAndLeavesNoKeyStuck(Path path) throws Throwable {
		Duration lease = Duration.ofMillis(300);
		AtomicBoolean down = new AtomicBoolean();
		this.executor.close();
		this.executor = new IdempotencyExecutor(new ForwardingIdempotencyStore(this.memory) {

			@Override
			public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result,
					Duration ttl) {
				unlessDown();
				return super.complete(key, token, fingerprint, result, ttl);
			}

			@Override
			public boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease) {
				unlessDown();
				return super.renew(key, token, fingerprint, lease);
			}

			private void unlessDown() {
				if (down.get()) {
					throw new UncheckedIOException(new IOException("connection refused"));
				}
			}

		}, FailureMode.CLOSED, 1 << 16, this.observer);
		IdempotencyPolicy policy = new IdempotencyPolicy("op", Duration.ofMinutes(1), lease, Duration.ZERO,
				Duration.ofSeconds(1), List.of(), codec(), Duration.ofSeconds(30));
		CompletableFuture<Object> call = CompletableFuture
			.supplyAsync(() -> uncheckedCall(path, policy, "order-17", () -> {
				down.set(true);
				return "receipt";
			}), THREADS);
		// Asked again for a lease, then given up: the caller is not kept waiting.
		assertThat(call).succeedsWithin(Duration.ofSeconds(10)).isEqualTo("receipt");
		down.set(false);
		// The unconfirmed placeholder ends with its lease (docs/guide.md, "Guarantees and
		// their limits").
		Awaitility.await()
			.atMost(Duration.ofSeconds(10))
			.ignoreExceptionsMatching((ex) -> ex.getCause() instanceof IdempotencyInProgressException)
			.until(() -> uncheckedCall(path, policy, "order-17", () -> "ran again"), "ran again"::equals);
	}

	@ParameterizedTest
	@EnumSource
	void anOwnerThatFailsAfterARenewalFoundItsKeyTakenSendsNoRelease(Path path) throws Throwable {
		AtomicInteger releases = new AtomicInteger();
		this.executor.close();
		this.executor = new IdempotencyExecutor(new ForwardingIdempotencyStore(this.memory) {

			@Override
			public boolean release(RecordKey key, String token) {
				releases.incrementAndGet();
				return super.release(key, token);
			}

		}, FailureMode.CLOSED, 1 << 16, this.observer);
		IdempotencyPolicy policy = new IdempotencyPolicy("op", Duration.ofMinutes(1), Duration.ofMillis(300),
				Duration.ZERO, Duration.ofSeconds(1), List.of(), codec());
		assertThatIllegalStateException().isThrownBy(() -> path.call(this.executor, policy, "order-19", () -> {
			assertThat(this.memory.deleteInProgress(new RecordKey("order-19"))).isEqualTo(Deletion.DELETED);
			Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> this.leaseLost.get() == 1);
			throw new IllegalStateException("card declined");
		})).withMessage("card declined");
		// Its token would fence a release out: none is sent, nor warned of as a call
		// past its maxDuration.
		assertThat(releases).hasValue(0);
		assertThat(this.leaseLost).hasValue(1);
	}

	private Object uncheckedCall(Path path, IdempotencyPolicy policy, String key, Callable<Object> method) {
		try {
			return path.call(this.executor, policy, key, method);
		}
		catch (Throwable ex) {
			throw new IllegalStateException(ex);
		}
	}

	static IdempotencyPolicy policy() {
		return new IdempotencyPolicy("op", Duration.ofMinutes(1), LEASE, Duration.ZERO, Duration.ofSeconds(1),
				List.of(), codec());
	}

	static ResultCodec.Binding codec() {
		return new JacksonResultCodec(new JsonMapper()).bind(ResolvableType.forClass(String.class));
	}

	/**
	 * How the guarded method returns: a value on the caller's thread, or a future that
	 * completes on another thread.
	 */
	enum Path {

		BLOCKING {
			@Override
			Object call(IdempotencyExecutor executor, IdempotencyPolicy policy, String key, Callable<Object> method)
					throws Throwable {
				return executor.execute(policy, key, new RecordKey(key), FP, method::call, null);
			}
		},

		FUTURE {
			@Override
			Object call(IdempotencyExecutor executor, IdempotencyPolicy policy, String key, Callable<Object> method)
					throws Throwable {
				try {
					return executor
						.executeAsync(policy, key, new RecordKey(key), FP, () -> CompletableFuture.supplyAsync(() -> {
							try {
								return method.call();
							}
							catch (RuntimeException ex) {
								throw ex;
							}
							catch (Exception ex) {
								throw new CompletionException(ex);
							}
						}, THREADS), null)
						.get(20, TimeUnit.SECONDS);
				}
				catch (ExecutionException ex) {
					throw (ex.getCause() instanceof CompletionException completion) ? completion.getCause()
							: ex.getCause();
				}
			}
		};

		abstract Object call(IdempotencyExecutor executor, IdempotencyPolicy policy, String key,
				Callable<Object> method) throws Throwable;

	}

	/**
	 * What the web layer does for a handler: takes the hold when the method returns and
	 * ends it once the response is written; writes a replay itself.
	 */
	private static final class Recorder {

		private final ResponseCapture capture = new ResponseCapture();

		private Hold hold;

		private RecordedResponse replayed;

		Object call(IdempotencyExecutor executor, IdempotencyPolicy policy, String key, Callable<Object> method)
				throws Throwable {
			Object value = executor.execute(policy, key, new RecordKey(key), FP, method::call, this.capture);
			ResponseCapture.Replay replay = this.capture.replay();
			if (replay != null) {
				this.replayed = replay.response();
				return "replayed";
			}
			this.hold = this.capture.take();
			return value;
		}

	}

	/**
	 * A store whose first completions or releases fail as if the connection was cut.
	 */
	private static class Unreachable extends ForwardingIdempotencyStore {

		private final AtomicInteger completions;

		private final AtomicInteger releases;

		Unreachable(IdempotencyStore delegate, int completions, int releases) {
			super(delegate);
			this.completions = new AtomicInteger(completions);
			this.releases = new AtomicInteger(releases);
		}

		@Override
		public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result,
				Duration ttl) {
			if (this.completions.getAndDecrement() > 0) {
				throw new UncheckedIOException(new IOException("connection reset"));
			}
			return super.complete(key, token, fingerprint, result, ttl);
		}

		@Override
		public boolean release(RecordKey key, String token) {
			if (this.releases.getAndDecrement() > 0) {
				throw new UncheckedIOException(new IOException("connection reset"));
			}
			return super.release(key, token);
		}

	}

}
