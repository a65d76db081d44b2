package io.github.idempotent.core;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import org.apache.commons.logging.Log;

/**
 * Logs the calls a store refused for one reason (unreachable, full) as one counting
 * warning per interval: an outage refuses every call, and listeners redeliver often.
 */
final class StoreOutageLog {

	private final Log logger;

	private final long intervalNanos;

	private final String refusal;

	private final String consequence;

	private final AtomicLong lastReport;

	private final LongAdder refusedSinceReport = new LongAdder();

	/**
	 * @param refusal the warning's first words, {@code "Idempotency store unavailable"}
	 * @param consequence what the refusals meant for their callers, and what to do
	 */
	StoreOutageLog(Log logger, Duration interval, String refusal, String consequence) {
		this.logger = logger;
		this.intervalNanos = interval.toNanos();
		this.refusal = refusal;
		this.consequence = consequence;
		this.lastReport = new AtomicLong(System.nanoTime() - this.intervalNanos);
	}

	void refused(IdempotencyPolicy policy, String clientKey, Throwable cause) {
		this.refusedSinceReport.increment();
		long now = System.nanoTime();
		long last = this.lastReport.get();
		if (now - last >= this.intervalNanos && this.lastReport.compareAndSet(last, now)) {
			long refused = this.refusedSinceReport.sumThenReset();
			this.logger.warn(this.refusal + ": refused " + refused + ((refused == 1) ? " call" : " calls")
					+ " since the last report, the latest to " + policy.name() + " (key '" + clientKey + "'). "
					+ this.consequence + ". Reported at most once per "
					+ Duration.ofNanos(this.intervalNanos).toSeconds() + " s, each refusal at debug; cause: " + cause);
		}
		else if (this.logger.isDebugEnabled()) {
			this.logger.debug(this.refusal + ": refused " + policy.name() + " for key '" + clientKey + "'", cause);
		}
	}

}
