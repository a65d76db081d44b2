package io.github.idempotent.core;

import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * The threads of the protocol, apart from the callers': the timer that ticks lease
 * renewals and times the waits of asynchronous duplicates, the threads that renew leases,
 * and those that run blocking store calls for asynchronous callers. Each is started on
 * demand, and those created here are stopped by {@link #close()}.
 */
final class IdempotencyThreads implements AutoCloseable {

	/**
	 * Most lease renewals running at once. A renewal normally takes one round trip, so
	 * one thread keeps up with thousands of calls; the others are for renewals stuck
	 * until the client's timeout, each of which holds a thread meanwhile (at most
	 * {@link LeaseWatchdog#MAX_ATTEMPTS} per call).
	 */
	private static final int RENEWAL_THREADS = 16;

	private final ScheduledExecutorService timer;

	private final boolean ownsTimer;

	private final ThreadPoolExecutor renewals = newRenewals();

	private volatile @Nullable Executor blockingStoreExecutor;

	private volatile boolean stopping;

	private @Nullable ExecutorService ownedBlockingStoreExecutor;

	/**
	 * Threads with a timer of their own.
	 */
	IdempotencyThreads() {
		this(newTimer(), true);
	}

	/**
	 * Threads timed by {@code timer}, which {@link #close()} does not stop.
	 */
	IdempotencyThreads(ScheduledExecutorService timer) {
		this(timer, false);
	}

	private IdempotencyThreads(ScheduledExecutorService timer, boolean ownsTimer) {
		this.timer = timer;
		this.ownsTimer = ownsTimer;
	}

	private static ScheduledExecutorService newTimer() {
		return new ScheduledThreadPoolExecutor(1, (task) -> {
			Thread thread = new Thread(task, "idempotent-lease-watchdog");
			thread.setDaemon(true);
			return thread;
		});
	}

	/**
	 * Renewal threads started on demand and stopped after a while idle; a renewal that
	 * finds all of them busy is rejected and retried by the watchdog shortly after.
	 */
	private static ThreadPoolExecutor newRenewals() {
		AtomicInteger threads = new AtomicInteger();
		return new ThreadPoolExecutor(0, RENEWAL_THREADS, 30, TimeUnit.SECONDS, new SynchronousQueue<>(), (task) -> {
			Thread thread = new Thread(task, "idempotent-lease-renewal-" + threads.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		});
	}

	/**
	 * From now on a call that would wait for the store again ends instead: the
	 * application is shutting down. Calls that run go on, and their leases are renewed,
	 * until {@link #close()}.
	 */
	void stopWaiting() {
		this.stopping = true;
	}

	/**
	 * Whether {@link #stopWaiting()} or {@link #close()} has been called.
	 */
	boolean isStopping() {
		return this.stopping;
	}

	/**
	 * The timer: it only starts work (a renewal handed to {@link #renewals()}, the next
	 * claim of a waiting duplicate), never waits for the store itself.
	 */
	ScheduledExecutorService timer() {
		return this.timer;
	}

	ExecutorService renewals() {
		return this.renewals;
	}

	void setBlockingStoreExecutor(Executor blockingStoreExecutor) {
		Assert.notNull(blockingStoreExecutor, "blockingStoreExecutor must not be null");
		this.blockingStoreExecutor = blockingStoreExecutor;
	}

	/**
	 * Where blocking store calls of asynchronous callers run: never the thread that
	 * completes a caller's future, which may be an event loop.
	 */
	Executor blockingStoreExecutor() {
		Executor executor = this.blockingStoreExecutor;
		if (executor == null) {
			synchronized (this) {
				executor = this.blockingStoreExecutor;
				if (executor == null) {
					executor = newBlockingStoreExecutor();
					this.ownedBlockingStoreExecutor = (ExecutorService) executor;
					this.blockingStoreExecutor = executor;
				}
			}
		}
		return executor;
	}

	private static ExecutorService newBlockingStoreExecutor() {
		// Used only when no executor was set (no Reactor): bounded, like Reactor's
		// bounded elastic scheduler, with idle threads let go.
		ThreadPoolExecutor executor = new ThreadPoolExecutor(64, 64, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
				(task) -> {
					Thread thread = new Thread(task, "idempotent-store");
					thread.setDaemon(true);
					return thread;
				});
		executor.allowCoreThreadTimeOut(true);
		return executor;
	}

	/**
	 * Waits on the caller's own thread (a duplicate's poll, a step asked again); false if
	 * the thread was interrupted, whose flag is kept.
	 */
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

	/**
	 * Stops the renewal threads, the store threads created here, and the timer if it was
	 * created here.
	 */
	@Override
	public void close() {
		this.stopping = true;
		this.renewals.shutdownNow();
		if (this.ownsTimer) {
			// Not shutdownNow: a task it dropped would never run, and a duplicate waiting
			// for its next claim, or a step waiting to be confirmed, would wait for ever
			// (a WebFlux handler returning a plain value holds its event loop while it
			// waits). Each task still runs when it is due, finds the threads closed and
			// ends its call; a new one is refused.
			this.timer.shutdown();
		}
		synchronized (this) {
			if (this.ownedBlockingStoreExecutor != null) {
				this.ownedBlockingStoreExecutor.shutdown();
			}
		}
	}

}
