package io.github.idempotent.core;

import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * The protocol's own threads: the timer, lease renewals, and blocking store calls for
 * asynchronous callers; {@link #close()} stops those created here.
 */
final class IdempotencyThreads implements AutoCloseable {

	/** One keeps up with thousands of calls; the others are for renewals stuck. */
	private static final int RENEWAL_THREADS = 16;

	final ScheduledExecutorService timer;

	private final boolean ownsTimer;

	final ThreadPoolExecutor renewals = newRenewals();

	/**
	 * Used until an executor is set (without Reactor): bounded, idle threads let go, none
	 * started before a call needs one.
	 */
	private final ThreadPoolExecutor ownedBlockingStoreExecutor = new ThreadPoolExecutor(64, 64, 60, TimeUnit.SECONDS,
			new LinkedBlockingQueue<>(), daemons(() -> "idempotent-store"));

	/** Never the thread that completes a caller's future, which may be an event loop. */
	volatile Executor blockingStoreExecutor = this.ownedBlockingStoreExecutor;

	/** Set at shutdown: a call that would wait for the store again ends instead. */
	volatile boolean stopping;

	/** Threads timed by {@code timer}, which {@link #close()} leaves, or by their own. */
	IdempotencyThreads(@Nullable ScheduledExecutorService timer) {
		this.ownsTimer = (timer == null);
		this.timer = (timer != null) ? timer
				: new ScheduledThreadPoolExecutor(1, daemons(() -> "idempotent-lease-watchdog"));
		this.ownedBlockingStoreExecutor.allowCoreThreadTimeOut(true);
	}

	/** A renewal that finds every thread busy is rejected and retried by the watchdog. */
	private static ThreadPoolExecutor newRenewals() {
		AtomicInteger threads = new AtomicInteger();
		return new ThreadPoolExecutor(0, RENEWAL_THREADS, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
				daemons(() -> "idempotent-lease-renewal-" + threads.incrementAndGet()));
	}

	static ThreadFactory daemons(Supplier<String> names) {
		return (task) -> {
			Thread thread = new Thread(task, names.get());
			thread.setDaemon(true);
			return thread;
		};
	}

	/** False if the thread was interrupted, whose flag is kept. */
	static boolean sleep(long millis) {
		try {
			Thread.sleep(millis);
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	@Override
	public void close() {
		this.stopping = true;
		this.renewals.shutdownNow();
		if (this.ownsTimer) {
			// Not shutdownNow: each task still runs when due, finds the threads closed
			// and ends its call; a dropped one would leave its caller waiting for ever.
			this.timer.shutdown();
		}
		this.ownedBlockingStoreExecutor.shutdown();
	}

}
