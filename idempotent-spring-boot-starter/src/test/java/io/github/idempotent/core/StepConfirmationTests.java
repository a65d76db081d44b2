package io.github.idempotent.core;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoreFullException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * When an owner's step (complete, release) that failed is asked again
 * ({@link StepConfirmation}): only after a store that cannot be reached or is full,
 * backing off, for one lease from the first failure, and past that only while the
 * watchdog still holds the lease.
 */
class StepConfirmationTests {

	private static final Fingerprint FP = new Fingerprint("fp");

	private static final IOException UNREACHABLE = new IOException("connection reset");

	private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

	private final ExecutorService renewals = Executors.newCachedThreadPool();

	@AfterEach
	void close() {
		this.scheduler.shutdownNow();
		this.renewals.shutdownNow();
	}

	@Test
	void aFailureOfTheDataOrTheCodeIsNeverRetried() {
		StepConfirmation step = new StepConfirmation(lease(Duration.ofMinutes(1), System.nanoTime()));
		assertThat(step.retryIn(new IllegalStateException("a bug"))).isEqualTo(-1);
		assertThat(step.retryIn(new IllegalArgumentException("ERR syntax error"))).isEqualTo(-1);
		assertThat(step.repeated()).isFalse();
	}

	@Test
	void anUnreachableOrFullStoreIsAskedAgainBackingOffFrom10MsDoublingUpToASecond() {
		StepConfirmation step = new StepConfirmation(lease(Duration.ofHours(1), System.nanoTime()));
		assertThat(step.repeated()).isFalse();
		List<Long> delays = new ArrayList<>();
		for (int i = 0; i < 9; i++) {
			delays.add(step.retryIn((i % 2 == 0) ? UNREACHABLE : new StoreFullException("full")));
		}
		assertThat(delays).containsExactly(10L, 20L, 40L, 80L, 160L, 320L, 640L, 1000L, 1000L);
		assertThat(step.repeated()).isTrue();
	}

	@Test
	void noRetryWaitsPastOneLeaseFromTheFirstFailure() {
		StepConfirmation step = new StepConfirmation(lease(Duration.ofSeconds(1), System.nanoTime()));
		List<Long> delays = new ArrayList<>();
		for (int i = 0; i < 7; i++) {
			delays.add(step.retryIn(UNREACHABLE));
		}
		assertThat(delays).containsExactly(10L, 20L, 40L, 80L, 160L, 320L, 640L);
		// What is left of the lease rather than the 1 000 ms back-off.
		assertThat(step.retryIn(UNREACHABLE)).isPositive().isLessThan(1000);
	}

	@Test
	void aStepIsGivenUpOnceALeaseHasPassedSinceItsFirstFailureWithoutARenewal() throws Exception {
		Duration leaseTime = Duration.ofMillis(50);
		StepConfirmation step = new StepConfirmation(lease(leaseTime, System.nanoTime()));
		assertThat(step.retryIn(UNREACHABLE)).isEqualTo(10);
		Thread.sleep(leaseTime.toMillis() + 20);
		assertThat(step.retryIn(UNREACHABLE)).isEqualTo(-1);
		assertThat(step.repeated()).isTrue();
	}

	@Test
	void aStepIsAskedAgainPastTheBoundWhileTheLeaseIsStillRenewedAndGivenUpOnceItIsLost() throws Exception {
		// A Redis full under noeviction refuses the completion but still renews the
		// lease.
		AtomicBoolean keyTaken = new AtomicBoolean();
		Duration leaseTime = Duration.ofMillis(300);
		LeaseWatchdog watchdog = new LeaseWatchdog(new LeaseWatchdogTests.ScriptedStore(() -> !keyTaken.get()),
				this.scheduler, this.renewals);
		LeaseWatchdog.Lease lease = watchdog.watch(call(leaseTime, Duration.ofMinutes(10)), "token");
		StepConfirmation step = new StepConfirmation(lease);
		assertThat(step.retryIn(UNREACHABLE)).isEqualTo(10);
		Thread.sleep(leaseTime.toMillis() + 50);
		assertThat(lease.isHeld(System.nanoTime())).isTrue();
		assertThat(step.retryIn(UNREACHABLE)).isEqualTo(20);
		assertThat(step.retryIn(new StoreFullException("full"))).isEqualTo(40);
		keyTaken.set(true);
		await().atMost(Duration.ofSeconds(20)).until(() -> lease.lost);
		assertThat(step.retryIn(UNREACHABLE)).isEqualTo(-1);
		watchdog.unwatch(lease);
	}

	@Test
	void aStepPastTheBoundIsGivenUpOnceTheCallIsPastItsMaxDurationThoughTheLeaseStillHolds() throws Exception {
		Duration leaseTime = Duration.ofMillis(600);
		LeaseWatchdog watchdog = new LeaseWatchdog(new LeaseWatchdogTests.ScriptedStore(() -> true), this.scheduler,
				this.renewals);
		LeaseWatchdog.Lease lease = watchdog.watch(call(leaseTime, Duration.ofMillis(900)), "token");
		StepConfirmation step = new StepConfirmation(lease);
		assertThat(step.retryIn(UNREACHABLE)).isEqualTo(10);
		await().atMost(Duration.ofSeconds(20)).until(() -> lease.overdue);
		// Renewed a third of a lease before maxDuration ran out, so still held.
		assertThat(lease.isHeld(System.nanoTime())).isTrue();
		assertThat(lease.lost).isFalse();
		assertThat(step.retryIn(UNREACHABLE)).isEqualTo(-1);
		watchdog.unwatch(lease);
	}

	private static LeaseWatchdog.Lease lease(Duration leaseTime, long claimedAt) {
		return new LeaseWatchdog.Lease(call(leaseTime, Duration.ofDays(1)), "token",
				Math.max(1, leaseTime.toNanos() / 3), claimedAt);
	}

	private static ProtocolCall call(Duration leaseTime, Duration maxDuration) {
		IdempotencyPolicy policy = new IdempotencyPolicy("op", Duration.ofMinutes(1), leaseTime, Duration.ZERO,
				Duration.ofSeconds(1), List.of(), OwnerHandleTests.codec(), maxDuration);
		return new ProtocolCall(policy, "k", new RecordKey("k"), FP, IdempotencyObserver.NONE, null, null, true);
	}

}
