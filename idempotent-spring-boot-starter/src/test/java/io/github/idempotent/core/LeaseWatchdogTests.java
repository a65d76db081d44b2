package io.github.idempotent.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.InspectableIdempotencyStore.Deletion;
import io.github.idempotent.store.RecordKey;
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

	private final IdempotencyExecutor executor = new IdempotencyExecutor(this.store, FailureMode.CLOSED, 1 << 16,
			new IdempotencyObserver() {

				@Override
				public void leaseLost(IdempotencyPolicy policy, String key) {
					LeaseWatchdogTests.this.leaseLost.incrementAndGet();
				}

				@Override
				public void maxDurationExceeded(IdempotencyPolicy policy, String key) {
					LeaseWatchdogTests.this.maxDurationExceeded.countDown();
				}

			});

	@AfterEach
	void close() {
		this.executor.close();
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

	private Object run(IdempotencyPolicy policy, RecordKey key, Callable<Object> method) throws Exception {
		try {
			return this.executor.execute(policy, "k", key, FP, method::call);
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
