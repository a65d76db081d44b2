package io.github.idempotent.core;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.ResolvableType;

import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the executor's fast paths must keep: leases of long calls are still renewed, short
 * calls schedule nothing, and results of every size are stored whole.
 */
class IdempotencyExecutorHotPathTests {

	private static final Fingerprint FP = new Fingerprint("fp");

	private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();

	private final CountingScheduler scheduler = new CountingScheduler();

	private final List<String> lostLeases = new ArrayList<>();

	private final IdempotencyExecutor executor = new IdempotencyExecutor(this.store, FailureMode.CLOSED, 1 << 20,
			this.scheduler, new IdempotencyObserver() {

				@Override
				public void leaseLost(IdempotencyPolicy policy, String key) {
					IdempotencyExecutorHotPathTests.this.lostLeases.add(key);
				}

			});

	@AfterEach
	void stop() {
		this.scheduler.shutdownNow();
	}

	@Test
	void callsShorterThanAThirdOfTheLeaseScheduleOneTimerBetweenThem() throws Throwable {
		IdempotencyPolicy policy = policy(String.class, Duration.ofSeconds(30));
		for (int i = 0; i < 1000; i++) {
			String key = "k" + i;
			assertThat(this.executor.execute(policy, key, new RecordKey(key), FP, () -> "done", null))
				.isEqualTo("done");
		}
		// One timer armed for the first call's renewal; the 999 calls that follow neither
		// schedule a task nor wake the timer's thread.
		assertThat(this.scheduler.scheduled.get()).isEqualTo(1);
	}

	@Test
	void aCallLongerThanItsLeaseKeepsItsKeyByRenewal() throws Throwable {
		Duration lease = Duration.ofMillis(300);
		IdempotencyPolicy policy = policy(String.class, lease);
		RecordKey key = new RecordKey("long-call");
		List<ClaimResult> seenWhileRunning = new ArrayList<>();
		Object result = this.executor.execute(policy, "long-call", key, FP, () -> {
			for (int i = 0; i < 4; i++) {
				Thread.sleep(250);
				seenWhileRunning.add(this.store.claim(key, FP, lease));
			}
			return "done";
		}, null);
		assertThat(result).isEqualTo("done");
		assertThat(seenWhileRunning).allMatch(ClaimResult.InProgress.class::isInstance);
		assertThat(this.lostLeases).isEmpty();
		assertThat(this.store.claim(key, FP, lease)).isInstanceOf(ClaimResult.Completed.class);
	}

	@Test
	void leasesOfConcurrentLongCallsAreAllRenewed() throws Throwable {
		Duration lease = Duration.ofMillis(300);
		IdempotencyPolicy policy = policy(String.class, lease);
		List<Thread> threads = new ArrayList<>();
		AtomicInteger completed = new AtomicInteger();
		for (int i = 0; i < 4; i++) {
			String name = "concurrent-" + i;
			long sleep = 400 + i * 150L;
			threads.add(startThread(() -> {
				try {
					this.executor.execute(policy, name, new RecordKey(name), FP, () -> {
						Thread.sleep(sleep);
						return "done";
					}, null);
					completed.incrementAndGet();
				}
				catch (Throwable ex) {
					throw new IllegalStateException(ex);
				}
			}));
		}
		for (Thread thread : threads) {
			thread.join();
		}
		assertThat(completed).hasValue(4);
		assertThat(this.lostLeases).isEmpty();
	}

	@Test
	void resultsLargerThanTheCodecBufferAreStoredWhole() throws Throwable {
		IdempotencyPolicy policy = policy(String.class, Duration.ofSeconds(30));
		for (int length : new int[] { 0, 1, 100, 7990, 8000, 8192, 10_000, 100_000 }) {
			String value = "x".repeat(length);
			String key = "size-" + length;
			this.executor.execute(policy, key, new RecordKey(key), FP, () -> value, null);
			Object replayed = this.executor.execute(policy, key, new RecordKey(key), FP, () -> "ran again", null);
			assertThat(replayed).as("replay of %d characters", length).isEqualTo(value);
		}
	}

	private static Thread startThread(Runnable task) {
		Thread thread = new Thread(task);
		thread.start();
		return thread;
	}

	private static IdempotencyPolicy policy(Class<?> returnType, Duration lease) {
		return new IdempotencyPolicy("op", Duration.ofMinutes(5), lease, Duration.ZERO, Duration.ofSeconds(1),
				List.of(), new JacksonResultCodec(new JsonMapper()).bind(ResolvableType.forClass(returnType)));
	}

	static final class CountingScheduler extends ScheduledThreadPoolExecutor {

		final AtomicInteger scheduled = new AtomicInteger();

		CountingScheduler() {
			super(1);
		}

		@Override
		public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
			this.scheduled.incrementAndGet();
			return super.schedule(command, delay, unit);
		}

		@Override
		public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay,
				TimeUnit unit) {
			this.scheduled.incrementAndGet();
			return super.scheduleWithFixedDelay(command, initialDelay, delay, unit);
		}

		@Override
		public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
			this.scheduled.incrementAndGet();
			return super.scheduleAtFixedRate(command, initialDelay, period, unit);
		}

	}

}
