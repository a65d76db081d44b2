package io.github.idempotent.core;

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
 * calls. The tick hands due renewals to a pool, so one stuck renewal holds up no other
 * lease. A renewal unanswered within a period is retried at once; a failed one after a
 * short back-off. No lease is renewed past its operation's {@code maxDuration}.
 */
final class LeaseWatchdog {

	private static final Log logger = LogFactory.getLog(LeaseWatchdog.class);

	// Under the executor's category: docs/operations.md tells operators to watch it.
	private static final Log lossLogger = LogFactory.getLog(IdempotencyExecutor.class);

	private static final long IDLE = Long.MIN_VALUE;

	/** Renewals of one lease in flight at once: the awaited one and a timed-out one. */
	static final int MAX_ATTEMPTS = 2;

	private static final Duration MAX_DEADLINE = Duration.ofDays(3650);

	private final IdempotencyStore store;

	private final ScheduledExecutorService scheduler;

	private final ExecutorService renewals;

	private final Set<Lease> running = ConcurrentHashMap.newKeySet();

	/**
	 * Due time of the earliest scheduled tick, or {@link #IDLE}; while not IDLE, that
	 * tick is pending or running and will scan every lease registered before it starts.
	 */
	private final AtomicLong nextTick = new AtomicLong(IDLE);

	LeaseWatchdog(IdempotencyStore store, ScheduledExecutorService scheduler, ExecutorService renewals) {
		this.store = store;
		this.scheduler = scheduler;
		this.renewals = renewals;
	}

	Lease watch(ProtocolCall call, String token) {
		long period = Math.max(TimeUnit.MILLISECONDS.toNanos(1), call.policy.lease().toNanos() / 3);
		Lease lease = new Lease(call, token, period, System.nanoTime());
		// Registered before nextTick is read: a tick that starts after this read sees it.
		this.running.add(lease);
		tickBy(lease.renewAt);
		return lease;
	}

	/**
	 * Stops renewing {@code lease}; returns once no renewal of it runs or will start: one
	 * after the release would re-create the record. Blocks: a completion signal's thread
	 * uses {@link #unwatchAsync}.
	 */
	void unwatch(Lease lease) {
		// A monitor, not a future's join: a caller woken by the last renewal is BLOCKED,
		// never seen WAITING, until it runs (ProtocolInterleavingTests relies on that).
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

	/** {@link #unwatch} that never waits: the stage completes once no renewal runs. */
	CompletableFuture<Void> unwatchAsync(Lease lease) {
		CompletableFuture<Void> drained = CompletableFuture.completedFuture(null);
		synchronized (lease) {
			lease.ended = true;
			if (lease.renewing > 0) {
				lease.drained = (lease.drained != null) ? lease.drained : new CompletableFuture<>();
				drained = lease.drained;
			}
		}
		this.running.remove(lease);
		return drained;
	}

	/** Renews again after {@link #unwatch}, for an owner resending a completion. */
	void rewatch(Lease lease) {
		long now = System.nanoTime();
		synchronized (lease) {
			if (lease.lost) {
				return;
			}
			lease.ended = false;
			lease.renewAt = now;
			// A renewal handed out before the unwatch may still run; not awaited.
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
				try {
					this.scheduler.schedule(() -> tick(deadline), Math.max(0, deadline - System.nanoTime()),
							TimeUnit.NANOSECONDS);
				}
				catch (RejectedExecutionException ex) {
					this.nextTick.compareAndSet(deadline, IDLE);
				}
				return;
			}
		}
	}

	private synchronized void tick(long deadline) {
		// Only the tick that nextTick names clears it.
		this.nextTick.compareAndSet(deadline, IDLE);
		long earliest = IDLE;
		for (Lease lease : this.running) {
			long due = check(lease, System.nanoTime());
			if (due != IDLE && (earliest == IDLE || due - earliest < 0)) {
				earliest = due;
			}
		}
		if (earliest != IDLE) {
			tickBy(earliest);
		}
	}

	/**
	 * Starts a due renewal, or gives up on one unanswered in time; returns when the lease
	 * next needs a tick, {@link #IDLE} if only a renewal in flight can change that.
	 */
	private long check(Lease lease, long now) {
		Attempt attempt = null;
		boolean timedOut = false;
		long due = IDLE;
		synchronized (lease) {
			if (lease.ended || lease.lost || lease.overdue) {
				return IDLE;
			}
			// Checked before any renewal is sent: none starts past maxDuration.
			lease.overdue = now - lease.deadline >= 0;
			if (!lease.overdue) {
				Attempt awaited = lease.awaited;
				if (awaited != null) {
					if (now - awaited.deadline < 0) {
						return awaited.deadline;
					}
					awaited.abandoned = true;
					lease.awaited = null;
					lease.failures++;
					lease.renewAt = now;
					timedOut = true;
				}
				if (now - lease.renewAt < 0) {
					due = lease.renewAt;
				}
				else if (lease.inFlight < MAX_ATTEMPTS) {
					attempt = new Attempt(lease, now, now + lease.period);
					lease.awaited = attempt;
					lease.inFlight++;
					due = attempt.deadline;
				}
			}
		}
		if (lease.overdue) {
			this.running.remove(lease);
			lease.reportMaxDurationExceeded();
			return IDLE;
		}
		if (timedOut) {
			logger.warn("Renewal of the lease of key '" + lease.call.clientKey + "' of " + lease.call.policy.name()
					+ " has not answered within " + Duration.ofNanos(lease.period) + "; retrying");
		}
		if (attempt != null) {
			try {
				Attempt renewal = attempt;
				this.renewals.execute(() -> renew(renewal));
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
			lease.retryLater();
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
			renewed = this.store.renew(lease.call.key, lease.token, lease.call.fingerprint, lease.call.policy.lease());
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
					// A late answer still extended the lease from when it was sent.
					if (attempt.started - lease.renewedAt > 0) {
						lease.renewedAt = attempt.started;
						lease.failures = 0;
						lease.renewAt = attempt.started + lease.period;
					}
				}
				else if (awaited) {
					retryIn = lease.retryLater();
				}
			}
		}
		if (unwatched != null) {
			unwatched.complete(null);
		}
		if (over) {
			return;
		}
		if (lost) {
			// Reported here once; the call's complete or release does not report it.
			this.running.remove(lease);
			lease.reportLost("renewal", whileHeld);
			return;
		}
		if (retryIn >= 0) {
			logger.warn("Could not renew the lease of key '" + lease.call.clientKey + "' of " + lease.call.policy.name()
					+ "; retrying in " + Duration.ofNanos(retryIn) + ": " + failure);
		}
		ended(lease);
	}

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

	private static final class Attempt {

		private final Lease lease;

		private final long started;

		private final long deadline;

		/** Given up on by the tick (guarded by the lease): if not started, never. */
		private boolean abandoned;

		Attempt(Lease lease, long started, long deadline) {
			this.lease = lease;
			this.started = started;
			this.deadline = deadline;
		}

	}

	/** The lease of one running call; its mutable state is guarded by its monitor. */
	static final class Lease {

		final ProtocolCall call;

		final String token;

		private final long period;

		/** Sending time of the claim or of the latest successful renewal. */
		private long renewedAt;

		private long renewAt;

		private int failures;

		private Attempt awaited;

		private int inFlight;

		/** Renewals inside the store's renew. */
		private int renewing;

		/** Completed when {@link #renewing} drops to 0, for {@link #unwatchAsync}. */
		private CompletableFuture<Void> drained;

		private boolean ended;

		volatile boolean lost;

		/** End of the call's {@code maxDuration}, by {@link System#nanoTime()}. */
		private final long deadline;

		volatile boolean overdue;

		Lease(ProtocolCall call, String token, long period, long claimedAt) {
			this.call = call;
			this.token = token;
			this.period = period;
			this.renewedAt = claimedAt;
			this.renewAt = claimedAt + period;
			// Capped at ten years: nanoTime differences must not overflow.
			Duration maxDuration = call.policy.maxDuration();
			Duration max = (maxDuration.compareTo(MAX_DEADLINE) > 0) ? MAX_DEADLINE : maxDuration;
			this.deadline = claimedAt + max.toNanos();
		}

		/** Counts a failed renewal and sets the next one after a back-off, returned. */
		private long retryLater() {
			this.failures++;
			long first = Math.max(TimeUnit.MILLISECONDS.toNanos(1), this.period / 10);
			long delay = Math.max(first, Math.min(first << Math.min(this.failures - 1, 10), this.period / 3));
			this.renewAt = System.nanoTime() + delay;
			return delay;
		}

		/**
		 * Whether the claim or last successful renewal went out within a lease before
		 * {@code now}: a key found taken then was deleted, not taken after a stall.
		 */
		synchronized boolean isHeld(long now) {
			return now - this.renewedAt < this.call.policy.lease().toNanos();
		}

		/** Lost at {@code step}: deleted {@code whileHeld}, else lapsed. */
		void reportLost(String step, boolean whileHeld) {
			IdempotencyPolicy policy = this.call.policy;
			if (whileHeld) {
				lossLogger.warn("Key '" + this.call.clientKey + "' of " + policy.name()
						+ " was taken from the call running under it, found at its " + step
						+ " while its lease still held: its record was deleted (an operator's DELETE with force=true). "
						+ "The call's renewals and its result are fenced out; a retry runs the method");
			}
			else {
				lossLogger.warn("Lease of key '" + this.call.clientKey + "' of " + policy.name() + " was lost before "
						+ step + ": the method ran longer than the lease without renewal; a duplicate may have run. "
						+ "Increase the lease or check the store's latency");
			}
			this.call.observer.leaseLost(policy, this.call.clientKey);
		}

		private void reportMaxDurationExceeded() {
			IdempotencyPolicy policy = this.call.policy;
			lossLogger.warn("Key '" + this.call.clientKey + "' of " + policy.name()
					+ " has been held by one call for its maxDuration (" + policy.maxDuration()
					+ "): its lease is no longer renewed, so a retry runs the method once the lease (" + policy.lease()
					+ ") runs out, and the call's result, if it ever comes, goes to its caller but is not stored. "
					+ "Raise maxDuration (idempotent.max-duration) if the method is legitimately this slow");
			this.call.observer.maxDurationExceeded(policy, this.call.clientKey);
		}

	}

}
