package io.github.idempotent.chaos;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs real threads one step at a time, in an order drawn from a seeded {@link Random}.
 * <p>
 * A step ends where a thread calls {@link #point}: before and after every store call
 * ({@link SteppedStore}), at the start of a timer task ({@link SteppedTimer}), in the
 * middle of a guarded method. At each step every thread of the scheduler's
 * {@link ThreadGroup} (the callers, the timer's tasks and the renewal threads they start,
 * which inherit the group) has come to rest: it waits at a point, waits on a monitor or a
 * queue of the library's own (an owner waiting in {@code unwatch} for a renewal in
 * flight, an idle renewal thread), or has ended. The scheduler then lets exactly one
 * waiting point go, drawn at random from those waiting, sorted by name so that the draw
 * depends only on the seed. Rest is observed three times over a gap, so that a thread
 * just woken (a renewal handed to an idle renewal thread) is seen running; a machine so
 * loaded that a woken thread waits longer than that for a core can still let two threads
 * run at once, and a replay then differs from the run it repeats.
 * <p>
 * The gap is longer than the lease the explored calls give the lease watchdog (1 ms), so
 * that every reading of {@link System#nanoTime()} in a later step is past every deadline
 * the watchdog set in an earlier one: at each of its ticks a renewal is due and a renewal
 * that has not answered has timed out. Time then decides nothing that the order of steps
 * does not, and a schedule replays from its seed.
 */
final class InterleavingScheduler {

	private static final long GAP_NANOS = TimeUnit.MICROSECONDS.toNanos(1100);

	private static final long STUCK_NANOS = TimeUnit.SECONDS.toNanos(20);

	private final Random random;

	private final ThreadGroup group;

	private final Map<Thread, Turn> waiting = new HashMap<>();

	private final List<Thread> callers = new ArrayList<>();

	private final List<String> trace = new ArrayList<>();

	private volatile boolean active = true;

	private volatile int step;

	InterleavingScheduler(long seed, String name) {
		this.random = new Random(seed);
		this.group = new ThreadGroup(name);
	}

	/**
	 * Starts {@code body} on a thread of this scheduler that waits for its first turn.
	 * @param caller whether the run waits for it to end (a call, the operator), rather
	 * than only for it to come to rest (a timer task)
	 */
	Thread start(String name, boolean caller, Runnable body) {
		Thread thread = new Thread(this.group, () -> {
			point(name, "starts");
			body.run();
		}, name);
		thread.setDaemon(true);
		if (caller) {
			synchronized (this) {
				this.callers.add(thread);
			}
		}
		thread.start();
		return thread;
	}

	/**
	 * Waits until the scheduler lets {@code name} take its next step, {@code label}. A
	 * no-op outside the scheduler's threads, or once the run is over.
	 */
	void point(String name, String label) {
		if (!this.active || Thread.currentThread().getThreadGroup() != this.group) {
			return;
		}
		Turn turn = new Turn(name, label);
		synchronized (this) {
			this.waiting.put(Thread.currentThread(), turn);
			notifyAll();
			boolean interrupted = false;
			while (!turn.go && this.active) {
				try {
					wait();
				}
				catch (InterruptedException ex) {
					interrupted = true;
				}
			}
			turn.running = true;
			notifyAll();
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/**
	 * The step being taken, counted from 1.
	 */
	int step() {
		return this.step;
	}

	List<String> trace() {
		return this.trace;
	}

	/**
	 * Lets steps go until every caller has ended and no point waits.
	 * @throws IllegalStateException if a thread does not come to rest, or every caller
	 * waits for something no step can give
	 */
	void run(int maxSteps) {
		try {
			while (true) {
				awaitRest();
				Map.Entry<Thread, Turn> next;
				synchronized (this) {
					List<Map.Entry<Thread, Turn>> ready = new ArrayList<>(this.waiting.entrySet());
					if (ready.isEmpty()) {
						if (this.callers.stream().anyMatch(Thread::isAlive)) {
							throw new IllegalStateException("No step can be taken but a call has not ended: "
									+ threads() + "; steps: " + this.trace);
						}
						return;
					}
					if (this.step >= maxSteps) {
						throw new IllegalStateException("No end after " + maxSteps + " steps: " + this.trace);
					}
					ready.sort(Comparator.comparing((Map.Entry<Thread, Turn> entry) -> entry.getValue().name)
						.thenComparing((entry) -> entry.getValue().label));
					next = ready.get(this.random.nextInt(ready.size()));
					this.waiting.remove(next.getKey());
					this.step++;
					this.trace.add(this.step + " " + next.getValue().name + ": " + next.getValue().label);
					next.getValue().go = true;
					notifyAll();
					while (!next.getValue().running) {
						waitQuietly();
					}
				}
			}
		}
		finally {
			synchronized (this) {
				this.active = false;
				notifyAll();
			}
		}
	}

	private void awaitRest() {
		long stuckAt = System.nanoTime() + STUCK_NANOS;
		while (true) {
			if (atRest()) {
				LockSupport.parkNanos(GAP_NANOS / 2);
				if (atRest()) {
					LockSupport.parkNanos(GAP_NANOS / 2);
					if (atRest()) {
						return;
					}
				}
			}
			if (System.nanoTime() - stuckAt > 0) {
				throw new IllegalStateException("A thread did not come to rest: " + threads());
			}
			Thread.onSpinWait();
		}
	}

	private synchronized boolean atRest() {
		for (Thread thread : groupThreads()) {
			if (this.waiting.containsKey(thread)) {
				continue;
			}
			Thread.State state = thread.getState();
			// BLOCKED is a thread on its way: no thread holds a monitor of the library's
			// while it waits at a point, so a monitor is only ever held by one running.
			if (state == Thread.State.RUNNABLE || state == Thread.State.NEW || state == Thread.State.BLOCKED) {
				return false;
			}
		}
		return true;
	}

	private List<Thread> groupThreads() {
		Thread[] threads = new Thread[this.group.activeCount() + 16];
		int count = this.group.enumerate(threads);
		List<Thread> alive = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			if (threads[i].isAlive()) {
				alive.add(threads[i]);
			}
		}
		return alive;
	}

	private String threads() {
		StringBuilder text = new StringBuilder();
		for (Thread thread : groupThreads()) {
			Turn turn = this.waiting.get(thread);
			text.append("\n  ")
				.append(thread.getName())
				.append(' ')
				.append(thread.getState())
				.append((turn != null) ? " at " + turn.name + ": " + turn.label : "");
			for (StackTraceElement element : thread.getStackTrace()) {
				if (element.getClassName().startsWith("io.github.idempotent")) {
					text.append("\n      at ").append(element);
				}
			}
		}
		return text.toString();
	}

	private void waitQuietly() {
		try {
			wait();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

	private static final class Turn {

		private final String name;

		private final String label;

		private boolean go;

		private boolean running;

		Turn(String name, String label) {
			this.name = name;
			this.label = label;
		}

	}

}
