package io.github.idempotent.core;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import org.apache.commons.logging.Log;

/**
 * Logs calls refused because the store cannot be reached as one warning per interval that
 * counts them: an outage refuses every call, and a listener container redelivers many
 * times a second. Other refusals go to debug, with their stack trace.
 */
final class StoreOutageLog {

	private final Log logger;

	private final long intervalNanos;

	private final AtomicLong lastReport;

	private final LongAdder refusedSinceReport = new LongAdder();

	StoreOutageLog(Log logger, Duration interval) {
		this.logger = logger;
		this.intervalNanos = interval.toNanos();
		this.lastReport = new AtomicLong(System.nanoTime() - this.intervalNanos);
	}

	void refused(IdempotencyPolicy policy, String clientKey, Throwable cause) {
		this.refusedSinceReport.increment();
		long now = System.nanoTime();
		long last = this.lastReport.get();
		if (now - last >= this.intervalNanos && this.lastReport.compareAndSet(last, now)) {
			long refused = this.refusedSinceReport.sumThenReset();
			this.logger.warn("Idempotency store unavailable: refused " + refused + ((refused == 1) ? " call" : " calls")
					+ " since the last report, the latest to " + policy.name() + " (key '" + clientKey + "'). "
					+ "None of them ran (idempotent.failure-mode=closed): HTTP callers get 503, listeners get their "
					+ "message again until the store is back. Reported at most once per "
					+ Duration.ofNanos(this.intervalNanos).toSeconds() + " s, each refusal at debug; cause: " + cause);
		}
		else if (this.logger.isDebugEnabled()) {
			this.logger.debug(
					"Idempotency store unavailable: refused " + policy.name() + " for key '" + clientKey + "'", cause);
		}
	}

}
