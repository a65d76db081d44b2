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
		acknowledged(policy, key);
	}

	@Override
	public void skipped(IdempotencyPolicy policy, String key) {
		acknowledged(policy, key);
	}

	private void acknowledged(IdempotencyPolicy policy, String key) {
		if (logger.isDebugEnabled() && this.inListener.getAsBoolean()) {
			logger.debug("Acknowledged a duplicate " + this.broker + " message without running " + policy.name()
					+ " again (key '" + key + "' completed before)");
		}
	}

	@Override
	public void flagged(IdempotencyPolicy policy, String key) {
		if (logger.isDebugEnabled() && this.inListener.getAsBoolean()) {
			logger.debug("Running " + policy.name() + " for a duplicate " + this.broker + " message, flagged as one "
					+ "(key '" + key + "' completed before; its stored result stays)");
		}
	}

}
