package io.github.idempotent.store.jdbc;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.context.SmartLifecycle;
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
		long period = this.interval.toMillis();
		Assert.state(period > 0, "interval must be at least 1ms");
		this.scheduler = OwnTransaction.daemon("idempotent-jdbc-purge");
		this.scheduler.scheduleWithFixedDelay(this::purge, ThreadLocalRandom.current().nextLong(period) + 1, period,
				TimeUnit.MILLISECONDS);
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

}
