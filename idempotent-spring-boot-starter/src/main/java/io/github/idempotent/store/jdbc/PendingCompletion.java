package io.github.idempotent.store.jdbc;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.RecoverableDataAccessException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.transaction.CannotCreateTransactionException;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;

/**
 * A completion tied to the caller's transaction ({@link TransactionBoundCompletions}):
 * releases the claim on a rollback, writes the result after a commit if it could not be
 * written in it, and renews the lease meanwhile.
 */
final class PendingCompletion {

	private static final Log logger = LogFactory.getLog(JdbcIdempotencyStore.class);

	private final JdbcIdempotencyStore store;

	private final RecordKey key;

	private final String token;

	private final Fingerprint fingerprint;

	private final StoredResult result;

	private final Duration ttl;

	private final Duration lease;

	private ScheduledFuture<?> renewal;

	private boolean afterCommit;

	private boolean ended;

	/**
	 * A renewal during the completion would meet the completed row and report a takeover.
	 */
	private boolean completing;

	PendingCompletion(JdbcIdempotencyStore store, RecordKey key, String token, Fingerprint fingerprint,
			StoredResult result, Duration ttl, Duration lease) {
		this.store = store;
		this.key = key;
		this.token = token;
		this.fingerprint = fingerprint;
		this.result = result;
		this.ttl = ttl;
		this.lease = lease;
	}

	Fingerprint fingerprint() {
		return this.fingerprint;
	}

	StoredResult result() {
		return this.result;
	}

	synchronized void completeAfterCommit(ScheduledExecutorService scheduler) {
		this.afterCommit = true;
		long period = Math.max(1, this.lease.toMillis() / 3);
		this.renewal = scheduler.scheduleWithFixedDelay(this::renewLease, period, period, TimeUnit.MILLISECONDS);
	}

	/** Keeps duplicates out while the caller's transaction stays open. */
	private synchronized void renewLease() {
		if (this.ended || this.completing) {
			return;
		}
		try {
			if (!this.store.renew(this.key, this.token, this.fingerprint, this.lease)) {
				logger.warn("Key '" + this.key + "' was taken over while the transaction that ran its method was "
						+ "still open: a duplicate may run it again. Keep such transactions shorter");
				this.renewal.cancel(false);
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not renew the lease of key '" + this.key + "' while its transaction is open; retrying: "
					+ ex);
		}
	}

	void transactionEnded(boolean committed) {
		if (committed && this.afterCommit) {
			storeAfterCommit();
			return;
		}
		synchronized (this) {
			// A renewal after the release below would write the record anew.
			this.ended = true;
			if (this.renewal != null) {
				this.renewal.cancel(false);
			}
		}
		if (committed) {
			return;
		}
		// In a new transaction, as Spring requires after completion. Sent again while its
		// outcome is unknown: fenced by the token, a release that landed counts as done.
		RuntimeException failure = confirm(() -> {
			this.store.release(this.key, this.token);
			return true;
		}, () -> false);
		if (failure != null) {
			logger.error("Could not release key '" + this.key + "' after its transaction rolled back (the "
					+ "database stayed unreachable for " + this.lease + "); retries are refused until its "
					+ "lease expires", failure);
		}
	}

	/**
	 * Sent again while its outcome is unknown: a completion that landed finds its own
	 * result. The lease is renewed between attempts, never during one.
	 */
	private void storeAfterCommit() {
		RuntimeException failure = confirm(() -> {
			synchronized (this) {
				// Waits for a renewal in flight; later ones skip while this is set.
				this.completing = true;
			}
			boolean completed;
			try {
				completed = this.store.completeOnItsOwn(this.key, this.token, this.fingerprint, this.result, this.ttl);
			}
			finally {
				synchronized (this) {
					this.completing = false;
				}
			}
			synchronized (this) {
				this.ended = true;
				this.renewal.cancel(false);
			}
			if (!completed) {
				logger.warn("Key '" + this.key + "' was taken over before its transaction committed: "
						+ "a duplicate may have run it again. Keep such transactions shorter than the lease");
			}
			return true;
		}, () -> {
			synchronized (this) {
				this.ended = true;
				this.renewal.cancel(false);
			}
			return false;
		});
		if (failure != null) {
			logger.error("Could not store the result of key '" + this.key + "' after its transaction "
					+ "committed (the database stayed unreachable for " + this.lease + "); the key stays in "
					+ "progress until its lease expires, then a retry runs the method again", failure);
		}
	}

	/**
	 * Retries {@code step} after a failure to reach the database, for up to one lease.
	 * @return the failure it gave up on, after running {@code giveUp}, or {@code null}
	 */
	private RuntimeException confirm(Supplier<Boolean> step, Supplier<Boolean> giveUp) {
		long deadline = System.nanoTime() + this.lease.toNanos();
		long delay = 10;
		while (true) {
			try {
				step.get();
				return null;
			}
			catch (RuntimeException ex) {
				if (!isUnreachable(ex) || System.nanoTime() - deadline >= 0 || !sleep(delay)) {
					giveUp.get();
					return ex;
				}
				logger.warn("Could not confirm a write of key '" + this.key + "' after its transaction ended; "
						+ "sending it again (fenced by the owner token, so repeating it is safe): " + ex);
				delay = Math.min(delay * 2, 1000);
			}
		}
	}

	/** The database could not be reached: the statement's outcome is unknown. */
	private static boolean isUnreachable(RuntimeException ex) {
		return ex instanceof DataAccessResourceFailureException || ex instanceof TransientDataAccessException
				|| ex instanceof RecoverableDataAccessException || ex instanceof CannotCreateTransactionException;
	}

	private static boolean sleep(long millis) {
		try {
			Thread.sleep(millis);
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

}
