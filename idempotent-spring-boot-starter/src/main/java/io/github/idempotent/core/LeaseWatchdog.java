package io.github.idempotent.core;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.github.idempotent.store.IdempotencyStore;

/**
 * Renews the lease of every running call each third of its lease, with one timer for all
 * calls instead of one scheduled task per call.
 * <p>
 * A call registers its lease in a set; the scheduler holds a single tick, due at the
 * earliest renewal. A call that registers later than that tick (the usual case: every
 * call has the same lease) touches only the set and one atomic read: it neither schedules
 * a task nor wakes the scheduler's thread, so a call shorter than a third of its lease
 * costs no thread hop. When the tick finds no call left, nothing is scheduled until the
 * next call registers.
 * <p>
 * The tick itself never waits for the store: it hands each due renewal to a pool of
 * renewal threads, so one renewal stuck in a pool wait or on a dead connection (up to the
 * client's own timeout, a minute by default with Lettuce) holds up no other lease. A
 * renewal that has not answered within a third of the lease counts as failed and is tried
 * again at once, on another thread; one that fails is tried again after a short back-off
 * (a tenth of the renewal period, doubling, at most a third of it), not a whole period
 * later, so a lease gets several tries before it ends. At most {@value #MAX_ATTEMPTS}
 * renewals of one lease run at once, so that one stuck key cannot take every renewal
 * thread.
 * <p>
 * No lease is renewed past its operation's {@code maxDuration} from the claim: the first
 * tick after it stops renewing and reports it, so the key frees when the lease runs out
 * however long the call hangs.
 */
final class LeaseWatchdog {

	private static final Log logger = LogFactory.getLog(LeaseWatchdog.class);

	/**
	 * Value of {@link #nextTick} when no tick is scheduled.
	 */
	private static final long IDLE = Long.MIN_VALUE;

	/**
	 * Renewals of one lease in flight at once: the one the tick waits for and one that
	 * timed out but has not returned yet.
	 */
	static final int MAX_ATTEMPTS = 2;

	private static final Duration MAX_DEADLINE = Duration.ofDays(3650);

	private final IdempotencyStore store;

	private final ScheduledExecutorService scheduler;

	private final ExecutorService renewals;

	private final LeaseListener leaseListener;

	private final Set<Lease> running = ConcurrentHashMap.newKeySet();

	/**
	 * Due time ({@link System#nanoTime()}) of the earliest scheduled tick, or
	 * {@link #IDLE}. Invariant: while it is not IDLE, a tick for that time is pending or
	 * running, and it will scan every lease registered before it starts.
	 */
	private final AtomicLong nextTick = new AtomicLong(IDLE);

	/**
	 * Creates a watchdog whose ticks run on {@code scheduler} and whose renewals run on
	 * {@code renewals}, which should run tasks concurrently and may reject them when full
	 * (a rejected renewal is retried like a failed one).
	 */
	LeaseWatchdog(IdempotencyStore store, ScheduledExecutorService scheduler, ExecutorService renewals,
			LeaseListener leaseListener) {
		this.store = store;
		this.scheduler = scheduler;
		this.renewals = renewals;
		this.leaseListener = leaseListener;
	}

	Lease watch(IdempotencyPolicy policy, String clientKey, RecordKey key, String token, Fingerprint fingerprint,
			IdempotencyObserver observer) {
		long period = Math.max(TimeUnit.MILLISECONDS.toNanos(1), policy.lease().toNanos() / 3);
		long now = System.nanoTime();
		Lease lease = new Lease(policy, clientKey, key, token, fingerprint, observer, period, now);
		// Registered before nextTick is read: a tick that starts after this read sees it.
		this.running.add(lease);
		tickBy(lease.renewAt);
		return lease;
	}

	/**
	 * Stops renewing {@code lease}. Returns once no renewal of it is running, and none
	 * starts later: a renewal re-creates a record that has vanished, so one that ran
	 * after the caller released the key would leave a placeholder behind that blocks
	 * retries until its lease ends. Waits, so only on a blocking caller's own thread; a
	 * completion signal's thread uses {@link #unwatchAsync}.
	 */
	void unwatch(Lease lease) {
		synchronized (lease) {
			lease.ended = true;
			boolean interrupted = false;
			while (lease.renewing > 0) {
				try {
					lease.wait();
				}
				catch (InterruptedException ex) {
					// Still wait: the renewal ends by the client's own timeout.
					interrupted = true;
				}
			}
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
		this.running.remove(lease);
	}

	/**
	 * {@link #unwatch} for a call that ended on a completion signal, whose thread may be
	 * an event loop: never waits. The returned stage completes once no renewal of
	 * {@code lease} is running, at once unless one is in flight; the owner's store write
	 * follows it, on the thread that ends that renewal.
	 */
	CompletableFuture<Void> unwatchAsync(Lease lease) {
		CompletableFuture<Void> renewed = null;
		synchronized (lease) {
			lease.ended = true;
			if (lease.renewing > 0) {
				if (lease.drained == null) {
					lease.drained = new CompletableFuture<>();
				}
				renewed = lease.drained;
			}
		}
		this.running.remove(lease);
		return (renewed != null) ? renewed : CompletableFuture.completedFuture(null);
	}

	/**
	 * Renews {@code lease} again, at once, after {@link #unwatch}: for an owner whose
	 * completion could not be confirmed and is about to be sent again. When the renewal
	 * stopped is unknown (an attempt may have hung until the client's timeout), so the
	 * first renewal is not left for a whole period.
	 */
	void rewatch(Lease lease) {
		long now = System.nanoTime();
		synchronized (lease) {
			if (lease.lost) {
				return;
			}
			lease.ended = false;
			lease.renewAt = now;
			// A renewal handed out before the unwatch and not started yet runs when its
			// thread gets to it; the tick does not wait for it.
			lease.awaited = null;
		}
		this.running.add(lease);
		tickBy(now);
	}

	private void tickBy(long deadline) {
		while (true) {
			long scheduled = this.nextTick.get();
			if (scheduled != IDLE && scheduled - deadline <= 0) {
				return;
			}
			if (this.nextTick.compareAndSet(scheduled, deadline)) {
				schedule(deadline);
				return;
			}
		}
	}

	private void schedule(long deadline) {
		try {
			this.scheduler.schedule(() -> tick(deadline), Math.max(0, deadline - System.nanoTime()),
					TimeUnit.NANOSECONDS);
		}
		catch (RejectedExecutionException ex) {
			// Shut down with the executor: nothing is renewed any more.
			this.nextTick.compareAndSet(deadline, IDLE);
		}
	}

	private synchronized void tick(long deadline) {
		// Only the tick that nextTick names clears it: an earlier one superseded by a
		// registration leaves the later one in charge.
		this.nextTick.compareAndSet(deadline, IDLE);
		long earliest = 0;
		boolean any = false;
		for (Lease lease : this.running) {
			long due = check(lease, System.nanoTime());
			if (due != IDLE && (!any || due - earliest < 0)) {
				earliest = due;
				any = true;
			}
		}
		if (any) {
			tickBy(earliest);
		}
	}

	/**
	 * Starts a renewal of {@code lease} if one is due, or gives up waiting for one that
	 * has not answered in time.
	 * @return when the lease next needs a tick, or {@link #IDLE} if only the end of a
	 * renewal in flight can change anything (that renewal asks for a tick itself)
	 */
	private long check(Lease lease, long now) {
		Attempt attempt = null;
		boolean timedOut = false;
		long due;
		synchronized (lease) {
			if (lease.ended || lease.lost || lease.overdue) {
				return IDLE;
			}
			if (now - lease.deadline >= 0) {
				// Checked before any renewal is sent: none starts past maxDuration, so
				// the
				// last one extended the lease from before it.
				lease.overdue = true;
			}
		}
		if (lease.overdue) {
			this.running.remove(lease);
			this.leaseListener.maxDurationExceeded(lease.policy, lease.clientKey, lease.observer);
			return IDLE;
		}
		synchronized (lease) {
			if (lease.ended || lease.lost) {
				return IDLE;
			}
			Attempt awaited = lease.awaited;
			if (awaited != null) {
				if (now - awaited.deadline < 0) {
					return awaited.deadline;
				}
				// Counts as failed, and is tried again at once: the deadline already
				// leaves less than two thirds of the lease.
				awaited.abandoned = true;
				lease.awaited = null;
				lease.failures++;
				lease.renewAt = now;
				timedOut = true;
			}
			if (now - lease.renewAt < 0) {
				due = lease.renewAt;
			}
			else if (lease.inFlight >= MAX_ATTEMPTS) {
				due = IDLE;
			}
			else {
				attempt = new Attempt(lease, now, now + lease.period);
				lease.awaited = attempt;
				lease.inFlight++;
				due = attempt.deadline;
			}
		}
		if (timedOut) {
			logger.warn("Renewal of the lease of key '" + lease.clientKey + "' of " + lease.policy.name()
					+ " has not answered within " + Duration.ofNanos(lease.period) + "; retrying");
		}
		if (attempt != null) {
			try {
				this.renewals.execute(attempt);
			}
			catch (RejectedExecutionException ex) {
				return rejected(attempt);
			}
		}
		return due;
	}

	private long rejected(Attempt attempt) {
		Lease lease = attempt.lease;
		synchronized (lease) {
			lease.inFlight--;
			if (lease.awaited != attempt) {
				return IDLE;
			}
			lease.awaited = null;
			if (this.renewals.isShutdown()) {
				return IDLE;
			}
			// Every renewal thread is busy: tried again like a failed renewal.
			lease.failures++;
			lease.renewAt = System.nanoTime() + lease.retryDelay();
			return lease.renewAt;
		}
	}

	private void renew(Attempt attempt) {
		Lease lease = attempt.lease;
		boolean skipped;
		synchronized (lease) {
			skipped = lease.ended || lease.lost || lease.overdue || attempt.abandoned;
			if (skipped) {
				lease.inFlight--;
			}
			else {
				lease.renewing++;
			}
		}
		if (skipped) {
			ended(lease);
			return;
		}
		Boolean renewed = null;
		RuntimeException failure = null;
		try {
			renewed = this.store.renew(lease.key, lease.token, lease.fingerprint, lease.policy.lease());
		}
		catch (RuntimeException ex) {
			failure = ex;
		}
		long retryIn = -1;
		boolean lost = false;
		boolean whileHeld = false;
		CompletableFuture<Void> unwatched = null;
		boolean over;
		synchronized (lease) {
			lease.renewing--;
			lease.inFlight--;
			if (lease.renewing == 0) {
				lease.notifyAll();
				unwatched = lease.drained;
				lease.drained = null;
			}
			over = lease.ended || lease.lost || lease.overdue;
			if (!over) {
				boolean awaited = lease.awaited == attempt;
				if (awaited) {
					lease.awaited = null;
				}
				if (Boolean.FALSE.equals(renewed)) {
					lease.lost = true;
					lost = true;
					whileHeld = lease.isHeld(System.nanoTime());
				}
				else if (renewed != null) {
					// Even a renewal that answered late extended the lease from when it
					// was sent, at the latest.
					if (attempt.started - lease.renewedAt > 0) {
						lease.renewedAt = attempt.started;
						lease.failures = 0;
						lease.renewAt = attempt.started + lease.period;
					}
				}
				else if (awaited) {
					lease.failures++;
					retryIn = lease.retryDelay();
					lease.renewAt = System.nanoTime() + retryIn;
				}
			}
		}
		if (unwatched != null) {
			// The owner ended while this renewal was in flight: its completion goes on
			// here, outside the lease's monitor.
			unwatched.complete(null);
		}
		if (over) {
			return;
		}
		if (lost) {
			// Not renewed again: whoever holds the key now is not this call. Reported
			// here once; the call's complete or release does not report it again.
			this.running.remove(lease);
			this.leaseListener.leaseLost(lease.policy, lease.clientKey, "renewal", whileHeld, lease.observer);
			return;
		}
		if (retryIn >= 0) {
			logger.warn("Could not renew the lease of key '" + lease.clientKey + "' of " + lease.policy.name()
					+ "; retrying in " + Duration.ofNanos(retryIn) + ": " + failure);
		}
		ended(lease);
	}

	/**
	 * A renewal of {@code lease} has ended: the tick may now start the next one.
	 */
	private void ended(Lease lease) {
		long renewAt;
		synchronized (lease) {
			if (lease.ended || lease.lost || lease.overdue) {
				return;
			}
			renewAt = (lease.awaited != null) ? lease.awaited.deadline : lease.renewAt;
		}
		tickBy(renewAt);
	}

	/**
	 * One renewal of a lease, run on a renewal thread.
	 */
	private final class Attempt implements Runnable {

		private final Lease lease;

		private final long started;

		private final long deadline;

		/**
		 * Whether the tick gave up waiting for it (guarded by the lease): one that has
		 * not started yet then never starts.
		 */
		private boolean abandoned;

		Attempt(Lease lease, long started, long deadline) {
			this.lease = lease;
			this.started = started;
			this.deadline = deadline;
		}

		@Override
		public void run() {
			renew(this);
		}

	}

	/**
	 * The lease of one running call. Its mutable state is guarded by its monitor.
	 */
	static final class Lease {

		private final IdempotencyPolicy policy;

		private final String clientKey;

		private final RecordKey key;

		private final String token;

		private final Fingerprint fingerprint;

		/**
		 * The call's observer, which hears of the lease's loss.
		 */
		private final IdempotencyObserver observer;

		private final long period;

		/**
		 * When the lease was last known extended: the claim, then the sending of the
		 * latest renewal that succeeded.
		 */
		private long renewedAt;

		private long renewAt;

		private int failures;

		/**
		 * The renewal the tick waits for, if any.
		 */
		private Attempt awaited;

		/**
		 * Renewals handed to the renewal threads and not finished.
		 */
		private int inFlight;

		/**
		 * Renewals inside the store's renew.
		 */
		private int renewing;

		/**
		 * Completed when {@link #renewing} drops to 0, for an owner that ended while a
		 * renewal was in flight (see {@link LeaseWatchdog#unwatchAsync}).
		 */
		private CompletableFuture<Void> drained;

		private boolean ended;

		private volatile boolean lost;

		/**
		 * When ({@link System#nanoTime()}) the call's {@code maxDuration} ends.
		 */
		private final long deadline;

		/**
		 * Whether the watchdog stopped renewing because the call outlived its
		 * {@code maxDuration} (and reported it).
		 */
		private volatile boolean overdue;

		Lease(IdempotencyPolicy policy, String clientKey, RecordKey key, String token, Fingerprint fingerprint,
				IdempotencyObserver observer, long period, long claimedAt) {
			this.observer = observer;
			this.policy = policy;
			this.clientKey = clientKey;
			this.key = key;
			this.token = token;
			this.fingerprint = fingerprint;
			this.period = period;
			this.renewedAt = claimedAt;
			this.renewAt = claimedAt + period;
			// Capped at ten years: nanoTime differences must not overflow.
			Duration max = (policy.maxDuration().compareTo(MAX_DEADLINE) > 0) ? MAX_DEADLINE : policy.maxDuration();
			this.deadline = claimedAt + max.toNanos();
		}

		/**
		 * Back-off after the current run of failures: a tenth of the period, doubling, at
		 * most a third of it, never under a millisecond.
		 */
		private long retryDelay() {
			long first = Math.max(TimeUnit.MILLISECONDS.toNanos(1), this.period / 10);
			long delay = first << Math.min(Math.max(this.failures - 1, 0), 10);
			return Math.max(first, Math.min(delay, this.period / 3));
		}

		String token() {
			return this.token;
		}

		Fingerprint fingerprint() {
			return this.fingerprint;
		}

		/**
		 * Whether a renewal found the key held by someone else (and reported it).
		 */
		boolean isLost() {
			return this.lost;
		}

		/**
		 * Whether the call outlived its {@code maxDuration}, so its lease is no longer
		 * renewed (and that was reported).
		 */
		boolean isOverdue() {
			return this.overdue;
		}

		/**
		 * Whether the lease still held at {@code now} by this JVM's clock: the claim or
		 * the latest renewal that succeeded was sent less than a lease ago, and the store
		 * extended the lease from when it received it, later still. A store that answers
		 * then that another token holds the key, or none, cannot have let it expire: the
		 * record was deleted (an operator's forced delete, which leaves a tombstone), not
		 * taken over after a stall.
		 */
		synchronized boolean isHeld(long now) {
			return now - this.renewedAt < this.policy.lease().toNanos();
		}

	}

	interface LeaseListener {

		/**
		 * @param whileHeld whether the key was taken while this owner's lease still held
		 * (see {@link Lease#isHeld})
		 */
		void leaseLost(IdempotencyPolicy policy, String clientKey, String step, boolean whileHeld,
				IdempotencyObserver observer);

		void maxDurationExceeded(IdempotencyPolicy policy, String clientKey, IdempotencyObserver observer);

	}

}
