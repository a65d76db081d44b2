package io.github.idempotent.chaos;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The lease watchdog's timer under {@link InterleavingScheduler}: each task it is given
 * is a thread that waits for its turn, whatever its delay. The watchdog keeps at most one
 * tick pending and checks the time itself when the tick runs, so running a tick early
 * only lets it find nothing due (the scheduler's gap makes everything due).
 */
final class SteppedTimer extends AbstractExecutorService implements ScheduledExecutorService {

	private final InterleavingScheduler scheduler;

	private final String instance;

	private final AtomicInteger ticks = new AtomicInteger();

	SteppedTimer(InterleavingScheduler scheduler, String instance) {
		this.scheduler = scheduler;
		this.instance = instance;
	}

	@Override
	public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
		this.scheduler.start(this.instance + ".tick#" + this.ticks.incrementAndGet(), false, command);
		// The watchdog never looks at what schedule returns.
		return null;
	}

	@Override
	public void execute(Runnable command) {
		schedule(command, 0, TimeUnit.NANOSECONDS);
	}

	@Override
	public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
		throw new UnsupportedOperationException();
	}

	@Override
	public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
		throw new UnsupportedOperationException();
	}

	@Override
	public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
		throw new UnsupportedOperationException();
	}

	@Override
	public void shutdown() {
	}

	@Override
	public List<Runnable> shutdownNow() {
		return List.of();
	}

	@Override
	public boolean isShutdown() {
		return false;
	}

	@Override
	public boolean isTerminated() {
		return false;
	}

	@Override
	public boolean awaitTermination(long timeout, TimeUnit unit) {
		return true;
	}

}
