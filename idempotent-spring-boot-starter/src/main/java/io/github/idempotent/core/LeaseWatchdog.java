package io.github.idempotent.core;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
 */
final class LeaseWatchdog {

	private static final Log logger = LogFactory.getLog(LeaseWatchdog.class);

	/**
	 * Value of {@link #nextTick} when no tick is scheduled.
	 */
	private static final long IDLE = Long.MIN_VALUE;

	private final IdempotencyStore store;

	private final ScheduledExecutorService scheduler;

	private final LeaseLostListener leaseLostListener;

	private final Set<Lease> running = ConcurrentHashMap.newKeySet();

	/**
	 * Due time ({@link System#nanoTime()}) of the earliest scheduled tick, or
	 * {@link #IDLE}. Invariant: while it is not IDLE, a tick for that time is pending or
	 * running, and it will scan every lease registered before it starts.
	 */
	private final AtomicLong nextTick = new AtomicLong(IDLE);

	LeaseWatchdog(IdempotencyStore store, ScheduledExecutorService scheduler, LeaseLostListener leaseLostListener) {
		this.store = store;
		this.scheduler = scheduler;
		this.leaseLostListener = leaseLostListener;
	}

	Lease watch(IdempotencyPolicy policy, String clientKey, IdempotencyKey key, String token, Fingerprint fingerprint) {
		long period = Math.max(TimeUnit.MILLISECONDS.toNanos(1), policy.lease().toNanos() / 3);
		Lease lease = new Lease(policy, clientKey, key, token, fingerprint, period, System.nanoTime() + period);
		// Registered before nextTick is read: a tick that starts after this read sees it.
		this.running.add(lease);
		tickBy(lease.renewAt);
		return lease;
	}

	/**
	 * Stops renewing {@code lease}. Returns once no renewal of it is running: a renewal
	 * re-creates a record that has vanished, so one that ran after the caller released
	 * the key would leave a placeholder behind that blocks retries until its lease ends.
	 */
	void unwatch(Lease lease) {
		synchronized (lease) {
			lease.ended = true;
		}
		this.running.remove(lease);
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
			if (lease.ended) {
				continue;
			}
			if (lease.renewAt - System.nanoTime() <= 0) {
				renew(lease);
				lease.renewAt = System.nanoTime() + lease.period;
			}
			if (!any || lease.renewAt - earliest < 0) {
				earliest = lease.renewAt;
				any = true;
			}
		}
		if (any) {
			tickBy(earliest);
		}
	}

	private void renew(Lease lease) {
		synchronized (lease) {
			if (!lease.ended) {
				renewHeld(lease);
			}
		}
	}

	private void renewHeld(Lease lease) {
		try {
			if (!this.store.renew(lease.key, lease.token, lease.fingerprint, lease.policy.lease())) {
				// Not renewed again: whoever holds the key now is not this call. Reported
				// here once; the call's complete or release does not report it again.
				lease.lost = true;
				this.running.remove(lease);
				this.leaseLostListener.leaseLost(lease.policy, lease.clientKey, "renewal");
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not renew the lease of key '" + lease.clientKey + "' of " + lease.policy.name()
					+ "; retrying: " + ex);
		}
	}

	/**
	 * The lease of one running call.
	 */
	static final class Lease {

		private final IdempotencyPolicy policy;

		private final String clientKey;

		private final IdempotencyKey key;

		private final String token;

		private final Fingerprint fingerprint;

		private final long period;

		private volatile long renewAt;

		private volatile boolean ended;

		private volatile boolean lost;

		Lease(IdempotencyPolicy policy, String clientKey, IdempotencyKey key, String token, Fingerprint fingerprint,
				long period, long renewAt) {
			this.policy = policy;
			this.clientKey = clientKey;
			this.key = key;
			this.token = token;
			this.fingerprint = fingerprint;
			this.period = period;
			this.renewAt = renewAt;
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

	}

	@FunctionalInterface
	interface LeaseLostListener {

		void leaseLost(IdempotencyPolicy policy, String clientKey, String step);

	}

}
