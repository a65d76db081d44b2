package io.github.idempotent.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.InspectableIdempotencyStore.Deletion;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;
import io.github.idempotent.testsupport.ForwardingIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The renewal of a running call's lease ({@link LeaseWatchdog}) as a caller and an
 * operator see it, on the in-memory store with short leases: a call longer than its lease
 * keeps its key, a renewal that finds the key taken reports the lease lost once and
 * fences the call out, a call past its {@code maxDuration} lets its key go, and a renewal
 * in flight when the call ends leaves no placeholder behind. Nothing waits for a clock:
 * each test waits for the store to see the renewals it needs.
 */
class LeaseWatchdogTests {

	private static final Fingerprint FP = new Fingerprint("fp");

	private static final Duration LEASE = Duration.ofMillis(300);

	private final InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore();

	private final CountedRenewals store = new CountedRenewals(this.memory);

	private final AtomicInteger leaseLost = new AtomicInteger();

	private final CountDownLatch maxDurationExceeded = new CountDownLatch(1);

	private final IdempotencyObserver observer = new IdempotencyObserver() {

		@Override
		public void leaseLost(IdempotencyPolicy policy, String key) {
			LeaseWatchdogTests.this.leaseLost.incrementAndGet();
		}

		@Override
		public void maxDurationExceeded(IdempotencyPolicy policy, String key) {
			LeaseWatchdogTests.this.maxDurationExceeded.countDown();
		}

	};

	private final IdempotencyExecutor executor = new IdempotencyExecutor(this.store, FailureMode.CLOSED, 1 << 16,
			this.observer);

	/** The timer and renewal pool of the tests of a watchdog on its own. */
	private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

	private final ExecutorService renewals = Executors.newCachedThreadPool();

	@AfterEach
	void close() {
		this.executor.close();
		this.scheduler.shutdownNow();
		this.renewals.shutdownNow();
	}

	@Test
	void aCallLongerThanItsLeaseKeepsItsKeyWhileTheLeaseIsRenewed() throws Exception {
		IdempotencyPolicy policy = policy(Duration.ofMinutes(10));
		RecordKey key = new RecordKey("long-call");
		CountDownLatch mayReturn = new CountDownLatch(1);
		AtomicInteger runs = new AtomicInteger();
		CompletableFuture<Object> owner = call(policy, key, () -> {
			runs.incrementAndGet();
			mayReturn.await(20, TimeUnit.SECONDS);
			return "owner";
		});
		// Renewals are sent a third of a lease apart from the claim on: after the fourth,
		// more than a lease has passed since the claim.
		await().atMost(Duration.ofSeconds(20)).until(() -> this.store.renewals.get() >= 4);
		assertThatExceptionOfType(IdempotencyInProgressException.class)
			.isThrownBy(() -> run(policy, key, runs::incrementAndGet));
		mayReturn.countDown();
		assertThat(owner.get(20, TimeUnit.SECONDS)).isEqualTo("owner");
		assertThat(run(policy, key, runs::incrementAndGet)).isEqualTo("owner");
		assertThat(runs).hasValue(1);
		assertThat(this.leaseLost).hasValue(0);
	}

	@Test
	void aRenewalThatFindsTheKeyTakenReportsTheLeaseLostOnceAndFencesTheCallOut() throws Exception {
		IdempotencyPolicy policy = policy(Duration.ofMinutes(10));
		RecordKey key = new RecordKey("taken");
		AtomicReference<String> newer = new AtomicReference<>();
		CompletableFuture<Object> owner = call(policy, key, () -> {
			// An operator deletes the placeholder and another caller claims the key.
			assertThat(this.memory.deleteInProgress(key)).isEqualTo(Deletion.DELETED);
			newer.set(((ClaimResult.Acquired) this.memory.claim(key, FP, Duration.ofMinutes(1))).token());
			await().atMost(Duration.ofSeconds(20)).until(() -> this.leaseLost.get() > 0);
			return "older";
		});
		assertThat(owner.get(20, TimeUnit.SECONDS)).isEqualTo("older");
		assertThat(this.leaseLost).hasValue(1);
		// The older call's result was not written over the newer placeholder, and no
		// renewal of the older call gave it back its key.
		assertThat(this.memory.claim(key, FP, LEASE)).isInstanceOf(ClaimResult.InProgress.class);
		assertThat(this.memory.renew(key, newer.get(), FP, Duration.ofMinutes(1))).isTrue();
	}

	@Test
	void aCallPastItsMaxDurationIsNoLongerRenewedSoARetryRunsOnceTheLeaseRunsOut() throws Exception {
		IdempotencyPolicy policy = policy(LEASE.multipliedBy(2));
		RecordKey key = new RecordKey("hung");
		CountDownLatch mayReturn = new CountDownLatch(1);
		CompletableFuture<Object> hung = call(policy, key, () -> {
			mayReturn.await(20, TimeUnit.SECONDS);
			return "late";
		});
		assertThat(this.maxDurationExceeded.await(20, TimeUnit.SECONDS)).isTrue();
		AtomicInteger retries = new AtomicInteger();
		await().atMost(Duration.ofSeconds(20))
			.ignoreException(IdempotencyInProgressException.class)
			.until(() -> run(policy, key, () -> "retry #" + retries.incrementAndGet()), "retry #1"::equals);
		mayReturn.countDown();
		assertThat(hung.get(20, TimeUnit.SECONDS)).isEqualTo("late");
		assertThat(run(policy, key, () -> "must not run")).isEqualTo("retry #1");
	}

	@Test
	void aRenewalInFlightWhenTheCallFailsLeavesNoPlaceholderBehind() throws Exception {
		IdempotencyPolicy policy = policy(Duration.ofMinutes(10));
		RecordKey key = new RecordKey("failed");
		this.store.holdNextRenewal();
		AtomicReference<Thread> caller = new AtomicReference<>();
		CompletableFuture<Object> failed = call(policy, key, () -> {
			caller.set(Thread.currentThread());
			assertThat(this.store.renewalHeld.await(20, TimeUnit.SECONDS)).isTrue();
			throw new IllegalStateException("declined");
		});
		// The call has failed and its release waits for the renewal in flight, which a
		// store answers late.
		await().atMost(Duration.ofSeconds(20))
			.until(() -> failed.isDone() || caller.get().getState() == Thread.State.WAITING);
		this.store.renewalMayGo.countDown();
		assertThatExceptionOfType(CompletionException.class).isThrownBy(failed::join)
			.havingCause()
			.isInstanceOf(IllegalStateException.class)
			.withMessage("declined");
		assertThat(this.store.renewalReturned.await(20, TimeUnit.SECONDS)).isTrue();
		assertThat(this.memory.inspect(key)).isEmpty();
		assertThat(run(policy, key, () -> "retry")).isEqualTo("retry");
	}

	@Test
	void aRenewalUnansweredWithinAPeriodIsSentAgainButNoMoreThanTwoAreInFlight() throws Exception {
		CountDownLatch answer = new CountDownLatch(1);
		ScriptedStore scripted = ScriptedStore.answeringOnce(answer);
		LeaseWatchdog watchdog = watchdog(scripted);
		LeaseWatchdog.Lease lease = watchdog.watch(call(LEASE, Duration.ofMinutes(10)), "token");
		await().atMost(Duration.ofSeconds(20)).until(() -> scripted.calls() >= 2);
		// Four periods later, still the two stuck renewals only.
		Thread.sleep(LEASE.toMillis() * 4 / 3);
		assertThat(scripted.calls()).isEqualTo(2);
		answer.countDown();
		// A late answer still extends the lease from when it was sent; renewals go on.
		await().atMost(Duration.ofSeconds(20)).until(() -> scripted.calls() >= 4);
		assertThat(lease.lost).isFalse();
		assertThat(lease.isHeld(System.nanoTime())).isTrue();
		watchdog.unwatch(lease);
	}

	@Test
	void aFailedRenewalIsRetriedAfterABackOffThatDoublesUpToAThirdOfAPeriod() throws Exception {
		// A 4.5 s lease: renewed each 1.5 s, a failed renewal retried after 150, 300,
		// then 500 ms (a third of a period); a success resets the back-off.
		AtomicInteger answers = new AtomicInteger();
		ScriptedStore scripted = new ScriptedStore(() -> {
			int n = answers.incrementAndGet();
			if (n <= 3 || n == 5) {
				throw new IllegalStateException("connection reset");
			}
			return true;
		});
		LeaseWatchdog watchdog = watchdog(scripted);
		LeaseWatchdog.Lease lease = watchdog.watch(call(Duration.ofMillis(4500), Duration.ofMinutes(10)), "token");
		await().atMost(Duration.ofSeconds(20)).until(() -> scripted.calls() >= 6);
		List<Long> gaps = scripted.gapsMillis();
		// Lower bounds only where a busy machine could stretch a gap past a tighter one.
		assertThat(gaps.get(0)).isBetween(145L, 1449L);
		assertThat(gaps.get(1)).isBetween(295L, 1449L);
		assertThat(gaps.get(2)).isBetween(495L, 1449L);
		// Renewed a period after the successful one was sent.
		assertThat(gaps.get(3)).isBetween(1450L, 4499L);
		// The success reset the back-off: 150 ms again, not 500.
		assertThat(gaps.get(4)).isBetween(145L, 494L);
		assertThat(lease.isHeld(System.nanoTime())).isTrue();
		assertThat(lease.lost).isFalse();
		watchdog.unwatch(lease);
	}

	@Test
	void aCallWithAMaxDurationOfCenturiesIsRenewed() {
		ScriptedStore scripted = new ScriptedStore(() -> true);
		LeaseWatchdog watchdog = watchdog(scripted);
		LeaseWatchdog.Lease lease = watchdog.watch(call(LEASE, Duration.ofDays(365L * 1000)), "token");
		await().atMost(Duration.ofSeconds(20)).until(() -> scripted.calls() >= 2);
		assertThat(lease.overdue).isFalse();
		watchdog.unwatch(lease);
	}

	@Test
	void anUnwatchedLeaseIsNoLongerRenewedAndARewatchedOneIsRenewedAtOnce() throws Exception {
		ScriptedStore scripted = new ScriptedStore(() -> true);
		LeaseWatchdog watchdog = watchdog(scripted);
		// Renewed each 10 s: only the rewatch sends one within the test.
		LeaseWatchdog.Lease lease = watchdog.watch(call(Duration.ofSeconds(30), Duration.ofMinutes(10)), "token");
		watchdog.unwatch(lease);
		watchdog.rewatch(lease);
		await().atMost(Duration.ofSeconds(5)).until(() -> scripted.calls() == 1);
		watchdog.unwatch(lease);
		LeaseWatchdog.Lease shortLease = watchdog.watch(call(LEASE, Duration.ofMinutes(10)), "token");
		watchdog.unwatch(shortLease);
		Thread.sleep(LEASE.toMillis());
		assertThat(scripted.calls()).isEqualTo(1);
	}

	@Test
	void aLostLeaseIsReportedOnceAndNeitherRenewedNorRewatched() throws Exception {
		ScriptedStore scripted = new ScriptedStore(() -> false);
		LeaseWatchdog watchdog = watchdog(scripted);
		LeaseWatchdog.Lease lease = watchdog.watch(call(LEASE, Duration.ofMinutes(10)), "token");
		await().atMost(Duration.ofSeconds(20)).until(() -> lease.lost);
		watchdog.rewatch(lease);
		Thread.sleep(LEASE.toMillis());
		assertThat(scripted.calls()).isEqualTo(1);
		assertThat(this.leaseLost).hasValue(1);
		// A lease has passed since the claim, the last time it was renewed.
		assertThat(lease.isHeld(System.nanoTime())).isFalse();
		watchdog.unwatch(lease);
	}

	@Test
	void anAsynchronousUnwatchCompletesOnceTheRenewalInFlightHasAnswered() throws Exception {
		CountDownLatch answer = new CountDownLatch(1);
		ScriptedStore scripted = ScriptedStore.answeringOnce(answer);
		LeaseWatchdog watchdog = watchdog(scripted);
		LeaseWatchdog.Lease idle = watchdog.watch(call(Duration.ofMinutes(1), Duration.ofMinutes(10)), "token");
		assertThat(watchdog.unwatchAsync(idle)).isDone();
		LeaseWatchdog.Lease lease = watchdog.watch(call(Duration.ofSeconds(3), Duration.ofMinutes(10)), "token");
		await().atMost(Duration.ofSeconds(20)).until(() -> scripted.calls() >= 1);
		// Renewed each second: none but the one in flight while the test runs.
		CompletableFuture<Void> drained = watchdog.unwatchAsync(lease);
		int sent = scripted.calls();
		assertThat(drained).isSameAs(watchdog.unwatchAsync(lease));
		Thread.sleep(50);
		assertThat(drained).isNotDone();
		answer.countDown();
		drained.get(20, TimeUnit.SECONDS);
		Thread.sleep(LEASE.toMillis());
		assertThat(scripted.calls()).isEqualTo(sent);
	}

	@Test
	void anInterruptedUnwatchStillWaitsForTheRenewalInFlightAndKeepsTheInterrupt() throws Exception {
		CountDownLatch answer = new CountDownLatch(1);
		ScriptedStore scripted = ScriptedStore.answeringOnce(answer);
		LeaseWatchdog watchdog = watchdog(scripted);
		LeaseWatchdog.Lease lease = watchdog.watch(call(Duration.ofSeconds(3), Duration.ofMinutes(10)), "token");
		await().atMost(Duration.ofSeconds(20)).until(() -> scripted.calls() >= 1);
		AtomicBoolean interruptKept = new AtomicBoolean();
		Thread caller = new Thread(() -> {
			watchdog.unwatch(lease);
			interruptKept.set(Thread.currentThread().isInterrupted());
		});
		caller.start();
		await().atMost(Duration.ofSeconds(20)).until(() -> caller.getState() == Thread.State.WAITING);
		caller.interrupt();
		Thread.sleep(50);
		assertThat(caller.isAlive()).isTrue();
		answer.countDown();
		caller.join(20_000);
		assertThat(caller.isAlive()).isFalse();
		assertThat(interruptKept).isTrue();
	}

	@Test
	void aRenewalThePoolRefusesIsRetriedAfterABackOffUntilThePoolIsShutDown() throws Exception {
		ScriptedStore scripted = new ScriptedStore(() -> true);
		AtomicInteger refusals = new AtomicInteger(2);
		AtomicInteger handedOut = new AtomicInteger();
		ThreadPoolExecutor pool = new ThreadPoolExecutor(1, 1, 1, TimeUnit.MINUTES, new LinkedBlockingQueue<>()) {

			@Override
			public void execute(Runnable task) {
				handedOut.incrementAndGet();
				if (refusals.getAndDecrement() > 0) {
					throw new RejectedExecutionException("busy");
				}
				super.execute(task);
			}

		};
		LeaseWatchdog watchdog = new LeaseWatchdog(scripted, this.scheduler, pool);
		// A 3 s lease: the first renewal after a second, retried 100 then 200 ms later.
		long start = System.nanoTime();
		LeaseWatchdog.Lease lease = watchdog.watch(call(Duration.ofSeconds(3), Duration.ofMinutes(10)), "token");
		await().atMost(Duration.ofSeconds(20)).until(() -> scripted.calls() == 1);
		assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(1290L, 3000L);
		watchdog.unwatch(lease);
		// A pool shut down is not asked again.
		pool.shutdown();
		int before = handedOut.get();
		LeaseWatchdog.Lease refused = watchdog.watch(call(LEASE, Duration.ofMinutes(10)), "token");
		Thread.sleep(LEASE.toMillis());
		assertThat(handedOut.get() - before).isEqualTo(1);
		assertThat(scripted.calls()).isEqualTo(1);
		watchdog.unwatch(refused);
	}

	@Test
	void aTimerThatRefusedATickDoesNotStopLaterLeasesFromBeingRenewed() {
		CountingTimer timer = new CountingTimer(1);
		try {
			ScriptedStore scripted = new ScriptedStore(() -> true);
			LeaseWatchdog watchdog = new LeaseWatchdog(scripted, timer, this.renewals);
			// The first lease's tick is refused; the second, due later, still gets one.
			watchdog.watch(call(Duration.ofMillis(150), Duration.ofMinutes(10)), "first");
			watchdog.watch(call(LEASE, Duration.ofMinutes(10)), "second");
			await().atMost(Duration.ofSeconds(20)).until(() -> scripted.calls() >= 2);
		}
		finally {
			timer.shutdownNow();
		}
	}

	@Test
	void aLeaseDueAfterThePendingTickCostsNoSchedulingAndTheEarliestLeaseIsRenewedOnTime() {
		CountingTimer timer = new CountingTimer(0);
		try {
			ScriptedStore scripted = new ScriptedStore(() -> true);
			LeaseWatchdog watchdog = new LeaseWatchdog(scripted, timer, this.renewals);
			watchdog.watch(call(LEASE, Duration.ofMinutes(10)), "short");
			// Due in 10 s, after the pending tick: no timer task of its own.
			watchdog.watch(call(Duration.ofSeconds(30), Duration.ofMinutes(10)), "long");
			assertThat(timer.scheduled).hasValue(1);
			// Each tick is set for the earliest lease due, not for the long one.
			await().atMost(Duration.ofSeconds(5)).until(() -> scripted.calls() >= 3);
		}
		finally {
			timer.shutdownNow();
		}
	}

	@Test
	void aShortLeaseWhoseRenewalIsUnansweredIsRenewedAgainBeforeItExpiresWhileLongerLeasesAreWatched()
			throws Exception {
		// The next tick is set for the earliest lease due, here the short lease's
		// unanswered renewal, not for the long leases due in 20 and 40 s: else its retry
		// would come after it expired and a duplicate could take over the running call.
		CountDownLatch answer = new CountDownLatch(1);
		AtomicReference<LeaseWatchdog.Lease> shortLease = new AtomicReference<>();
		AtomicReference<Boolean> heldWhenRetried = new AtomicReference<>();
		AtomicInteger answers = new AtomicInteger();
		ScriptedStore scripted = new ScriptedStore(() -> {
			if (answers.incrementAndGet() == 1) {
				// The store never answers the first renewal within the test.
				answer.await(20, TimeUnit.SECONDS);
			}
			else {
				heldWhenRetried.compareAndSet(null, shortLease.get().isHeld(System.nanoTime()));
			}
			return true;
		});
		LeaseWatchdog watchdog = watchdog(scripted);
		try {
			// A 9 s lease: renewed after 3 s, retried 3 s later, expires at 9 s (3 s to
			// spare on a busy machine).
			watchdog.watch(call(Duration.ofMinutes(1), Duration.ofMinutes(10)), "long");
			shortLease.set(watchdog.watch(call(Duration.ofSeconds(9), Duration.ofMinutes(10)), "short"));
			watchdog.watch(call(Duration.ofMinutes(2), Duration.ofMinutes(10)), "longer");
			await().atMost(Duration.ofSeconds(20))
				.until(() -> heldWhenRetried.get() != null || !shortLease.get().isHeld(System.nanoTime()));
			assertThat(heldWhenRetried).hasValue(true);
		}
		finally {
			answer.countDown();
		}
	}

	private LeaseWatchdog watchdog(IdempotencyStore store) {
		return new LeaseWatchdog(store, this.scheduler, this.renewals);
	}

	private ProtocolCall call(Duration lease, Duration maxDuration) {
		IdempotencyPolicy policy = new IdempotencyPolicy("op", Duration.ofMinutes(1), lease, Duration.ZERO,
				Duration.ofSeconds(1), List.of(), OwnerHandleTests.codec(), maxDuration);
		return new ProtocolCall(policy, "k", new RecordKey("k"), FP, this.observer, null, null, true);
	}

	/** A timer that counts the ticks it is given, and refuses the first few. */
	private static final class CountingTimer extends ScheduledThreadPoolExecutor {

		private final AtomicInteger refusals;

		private final AtomicInteger scheduled = new AtomicInteger();

		CountingTimer(int refusals) {
			super(1);
			this.refusals = new AtomicInteger(refusals);
		}

		@Override
		public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
			if (this.refusals.getAndDecrement() > 0) {
				throw new RejectedExecutionException("shutting down");
			}
			this.scheduled.incrementAndGet();
			return super.schedule(command, delay, unit);
		}

	}

	/** Answers renewals as the test scripts them, and notes when each was sent. */
	static final class ScriptedStore implements IdempotencyStore {

		private final Callable<Boolean> answer;

		private final List<Long> sent = new CopyOnWriteArrayList<>();

		ScriptedStore(Callable<Boolean> answer) {
			this.answer = answer;
		}

		/** Renewals all held until {@code answer} is counted down, then renewed. */
		static ScriptedStore answeringOnce(CountDownLatch answer) {
			return new ScriptedStore(() -> {
				answer.await(20, TimeUnit.SECONDS);
				return true;
			});
		}

		int calls() {
			return this.sent.size();
		}

		List<Long> gapsMillis() {
			List<Long> gaps = new ArrayList<>();
			for (int i = 1; i < this.sent.size(); i++) {
				gaps.add(TimeUnit.NANOSECONDS.toMillis(this.sent.get(i) - this.sent.get(i - 1)));
			}
			return gaps;
		}

		@Override
		public boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease) {
			this.sent.add(System.nanoTime());
			try {
				return this.answer.call();
			}
			catch (RuntimeException ex) {
				throw ex;
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		}

		@Override
		public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
			throw new UnsupportedOperationException();
		}

		@Override
		public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result,
				Duration ttl) {
			throw new UnsupportedOperationException();
		}

		@Override
		public boolean release(RecordKey key, String token) {
			throw new UnsupportedOperationException();
		}

	}

	private Object run(IdempotencyPolicy policy, RecordKey key, Callable<Object> method) throws Exception {
		try {
			return this.executor.execute(policy, "k", key, FP, method::call, null);
		}
		catch (Exception | Error ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw new IllegalStateException(ex);
		}
	}

	private CompletableFuture<Object> call(IdempotencyPolicy policy, RecordKey key, Callable<Object> method) {
		return CompletableFuture.supplyAsync(() -> {
			try {
				return run(policy, key, method::call);
			}
			catch (RuntimeException ex) {
				throw ex;
			}
			catch (Throwable ex) {
				throw new IllegalStateException(ex);
			}
		}, OwnerHandleTests.THREADS);
	}

	private static IdempotencyPolicy policy(Duration maxDuration) {
		return new IdempotencyPolicy("op", Duration.ofMinutes(1), LEASE, Duration.ZERO, Duration.ofSeconds(1),
				List.of(), OwnerHandleTests.codec(), maxDuration);
	}

	/**
	 * Counts the renewals the store receives, and can hold one until the test lets it go.
	 */
	private static final class CountedRenewals extends ForwardingIdempotencyStore {

		private final AtomicInteger renewals = new AtomicInteger();

		private volatile boolean holdNext;

		private final CountDownLatch renewalHeld = new CountDownLatch(1);

		private final CountDownLatch renewalMayGo = new CountDownLatch(1);

		private final CountDownLatch renewalReturned = new CountDownLatch(1);

		CountedRenewals(InMemoryIdempotencyStore delegate) {
			super(delegate);
		}

		void holdNextRenewal() {
			this.holdNext = true;
		}

		@Override
		public boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease) {
			this.renewals.incrementAndGet();
			if (!this.holdNext) {
				return super.renew(key, token, fingerprint, lease);
			}
			this.holdNext = false;
			this.renewalHeld.countDown();
			try {
				this.renewalMayGo.await(20, TimeUnit.SECONDS);
				return super.renew(key, token, fingerprint, lease);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
			finally {
				this.renewalReturned.countDown();
			}
		}

	}

}
