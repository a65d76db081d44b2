package io.github.idempotent.core;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Reports a call that lost its hold on its key (lease lapsed, record deleted, or past
 * {@code maxDuration}) as a warning under the executor's log category and to observers.
 */
final class LeaseLossReporter {

	private static final Log logger = LogFactory.getLog(IdempotencyExecutor.class);

	void leaseLost(IdempotencyPolicy policy, String clientKey, String step, boolean whileHeld,
			IdempotencyObserver observer) {
		if (whileHeld) {
			// Not a stall: the lease still held, so the record was deleted under it.
			logger.warn("Key '" + clientKey + "' of " + policy.name() + " was taken from the call running under it, "
					+ "found at its " + step + " while its lease still held: its record was deleted (an operator's "
					+ "DELETE with force=true). The call's renewals and its result are fenced out; a retry runs "
					+ "the method");
		}
		else {
			logger.warn("Lease of key '" + clientKey + "' of " + policy.name() + " was lost before " + step
					+ ": the method ran longer than the lease without renewal; a duplicate may have run. "
					+ "Increase the lease or check the store's latency");
		}
		observer.leaseLost(policy, clientKey);
	}

	void maxDurationExceeded(IdempotencyPolicy policy, String clientKey, IdempotencyObserver observer) {
		logger.warn("Key '" + clientKey + "' of " + policy.name() + " has been held by one call for its maxDuration ("
				+ policy.maxDuration() + "): its lease is no longer renewed, so a retry runs the method once the "
				+ "lease (" + policy.lease() + ") runs out, and the call's result, if it ever comes, goes to its "
				+ "caller but is not stored. Raise maxDuration (idempotent.max-duration) if the method is "
				+ "legitimately this slow");
		observer.maxDurationExceeded(policy, clientKey);
	}

}
