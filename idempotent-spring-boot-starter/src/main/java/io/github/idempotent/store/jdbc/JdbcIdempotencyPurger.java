package io.github.idempotent.store.jdbc;

import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.context.SmartLifecycle;
import org.springframework.dao.PessimisticLockingFailureException;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.util.Assert;

/**
 * Deletes the expired records of a {@link JdbcIdempotencyStore} on a schedule, on a
 * daemon thread. Every instance may run one: the first run is at a random point of the
 * first interval, and concurrent purges are safe. A zero interval schedules nothing.
 */
public class JdbcIdempotencyPurger implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(JdbcIdempotencyPurger.class);

	private final JdbcIdempotencyStore store;

	private final Duration interval;

	private final int batchSize;

	private ScheduledExecutorService scheduler;

	public JdbcIdempotencyPurger(JdbcIdempotencyStore store, Duration interval, int batchSize) {
		Assert.notNull(store, "store must not be null");
		Assert.isTrue(interval != null && !interval.isNegative(), "interval must not be negative");
		Assert.isTrue(batchSize > 0, "batchSize must be positive");
		this.store = store;
		this.interval = interval;
		this.batchSize = batchSize;
	}

	/**
	 * Purges once, now.
	 * @return the number of records deleted, or -1 if the purge failed (logged)
	 */
	public int purge() {
		try {
			int deleted = this.store.purgeExpired(this.batchSize);
			if (deleted > 0 && logger.isDebugEnabled()) {
				logger.debug("Purged " + deleted + " expired idempotency records from " + this.store.getTableName());
			}
			return deleted;
		}
		catch (RuntimeException ex) {
			logger.warn("Could not purge expired idempotency records from " + this.store.getTableName()
					+ "; trying again in " + this.interval + ": " + ex);
			return -1;
		}
	}

	@Override
	public synchronized void start() {
		if (this.scheduler != null || this.interval.isZero()) {
			return;
		}
		ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, (task) -> {
			Thread thread = new Thread(task, "idempotent-jdbc-purge");
			thread.setDaemon(true);
			return thread;
		});
		long period = this.interval.toMillis();
		long firstDelay = ThreadLocalRandom.current().nextLong(Math.max(1, period)) + 1;
		Assert.state(period > 0, "interval must be at least 1ms");
		scheduler.scheduleWithFixedDelay(this::purge, firstDelay, period, TimeUnit.MILLISECONDS);
		this.scheduler = scheduler;
	}

	@Override
	public synchronized void stop() {
		if (this.scheduler != null) {
			this.scheduler.shutdownNow();
			this.scheduler = null;
		}
	}

	@Override
	public synchronized boolean isRunning() {
		return this.scheduler != null;
	}

	/** The deletion of a store's expired rows, in batches. */
	static final class ExpiredRows {

		private static final int MAX_PURGE_ATTEMPTS = 8;

		private static final long PURGE_BACKOFF_MILLIS = 20;

		private final JdbcOperations jdbc;

		private final JdbcStatements sql;

		private final OwnTransaction ownTransaction;

		private final Supplier<Duration> takeoverMemory;

		ExpiredRows(JdbcOperations jdbc, JdbcStatements sql, OwnTransaction ownTransaction,
				Supplier<Duration> takeoverMemory) {
			this.jdbc = jdbc;
			this.sql = sql;
			this.ownTransaction = ownTransaction;
			this.takeoverMemory = takeoverMemory;
		}

		int purge(int batchSize) {
			int total = 0;
			while (true) {
				long memoryMillis = -this.takeoverMemory.get().toMillis();
				int deleted = (this.sql.purgeLock != null) ? purgeLockedBatch(memoryMillis, batchSize)
						: this.ownTransaction.run(() -> this.jdbc.update(this.sql.purge, memoryMillis, batchSize));
				total += deleted;
				if (deleted < batchSize) {
					return total;
				}
			}
		}

		private int purgeLockedBatch(long memoryMillis, int batchSize) {
			for (int attempt = 1;; attempt++) {
				try {
					return lockAndPurgeBatch(memoryMillis, batchSize);
				}
				catch (PessimisticLockingFailureException ex) {
					// Two purges can still deadlock on each other; the loser's batch was
					// rolled back whole and is tried again. Claims never wait on a purge:
					// every row it deletes it has locked before.
					if (attempt == MAX_PURGE_ATTEMPTS) {
						throw ex;
					}
					// A random pause, growing with the attempts, lets one go first.
					try {
						Thread.sleep(ThreadLocalRandom.current().nextLong(1, 1 + PURGE_BACKOFF_MILLIS * attempt));
					}
					catch (InterruptedException interrupted) {
						Thread.currentThread().interrupt();
						throw ex;
					}
				}
			}
		}

		private int lockAndPurgeBatch(long memoryMillis, int batchSize) {
			// READ COMMITTED of its own: the row locks must last until the delete, and no
			// gap may be locked.
			Integer deleted = this.ownTransaction.runInTransaction((status) -> {
				List<byte[]> keys = this.jdbc.query(this.sql.purgeLock, (rs, rowNum) -> rs.getBytes(1), memoryMillis,
						batchSize);
				if (keys.isEmpty()) {
					return 0;
				}
				String delete = this.sql.purge.replace("%KEYS%",
						String.join(", ", Collections.nCopies(keys.size(), "?")));
				return this.jdbc.update(delete, keys.toArray());
			});
			return (deleted != null) ? deleted : 0;
		}

	}

}
