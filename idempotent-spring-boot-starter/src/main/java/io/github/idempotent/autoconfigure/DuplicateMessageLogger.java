package io.github.idempotent.autoconfigure;

import java.util.function.BooleanSupplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyPolicy;

/**
 * Logs at debug each duplicate message acknowledged without running its listener, or
 * handed to it flagged as a duplicate: the normal fate of a redelivery.
 */
class DuplicateMessageLogger implements IdempotencyObserver {

	// The category it had in the messaging package, where applications look for it.
	private static final Log logger = LogFactory.getLog("io.github.idempotent.messaging.DuplicateMessageLogger");

	private final String broker;

	private final BooleanSupplier inListener;

	DuplicateMessageLogger(String broker, BooleanSupplier inListener) {
		this.broker = broker;
		this.inListener = inListener;
	}

	@Override
	public void replayed(IdempotencyPolicy policy, String key) {
		skipped(policy, key);
	}

	@Override
	public void skipped(IdempotencyPolicy policy, String key) {
		debug("Acknowledged a duplicate %s message without running %s again (key '%s' completed before)", policy, key);
	}

	@Override
	public void flagged(IdempotencyPolicy policy, String key) {
		debug("Running %2$s for a duplicate %1$s message, flagged as one (key '%3$s' completed before; its stored "
				+ "result stays)", policy, key);
	}

	private void debug(String format, IdempotencyPolicy policy, String key) {
		if (logger.isDebugEnabled() && this.inListener.getAsBoolean()) {
			logger.debug(format.formatted(this.broker, policy.name(), key));
		}
	}

}
