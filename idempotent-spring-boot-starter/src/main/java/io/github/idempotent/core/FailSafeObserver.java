package io.github.idempotent.core;

import java.util.function.Consumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/** See {@link IdempotencyObserver#failSafe(IdempotencyObserver)}. */
final class FailSafeObserver implements IdempotencyObserver {

	private static final Log logger = LogFactory.getLog(FailSafeObserver.class);

	private final IdempotencyObserver delegate;

	FailSafeObserver(IdempotencyObserver delegate) {
		this.delegate = delegate;
	}

	@Override
	public void executed(IdempotencyPolicy policy, String key) {
		notify("executed", policy, (observer) -> observer.executed(policy, key));
	}

	@Override
	public void replayed(IdempotencyPolicy policy, String key) {
		notify("replayed", policy, (observer) -> observer.replayed(policy, key));
	}

	@Override
	public void skipped(IdempotencyPolicy policy, String key) {
		notify("skipped", policy, (observer) -> observer.skipped(policy, key));
	}

	@Override
	public void flagged(IdempotencyPolicy policy, String key) {
		notify("flagged", policy, (observer) -> observer.flagged(policy, key));
	}

	@Override
	public void rejected(IdempotencyPolicy policy, String key, IdempotencyException reason) {
		notify("rejected", policy, (observer) -> observer.rejected(policy, key, reason));
	}

	@Override
	public void bypassed(IdempotencyPolicy policy, String key, RuntimeException storeFailure) {
		notify("bypassed", policy, (observer) -> observer.bypassed(policy, key, storeFailure));
	}

	@Override
	public void leaseLost(IdempotencyPolicy policy, String key) {
		notify("leaseLost", policy, (observer) -> observer.leaseLost(policy, key));
	}

	@Override
	public void maxDurationExceeded(IdempotencyPolicy policy, String key) {
		notify("maxDurationExceeded", policy, (observer) -> observer.maxDurationExceeded(policy, key));
	}

	@Override
	public void step(IdempotencyPolicy policy, String key, Step step) {
		// No lambda, unlike the callbacks above: steps come on every call.
		try {
			this.delegate.step(policy, key, step);
		}
		catch (RuntimeException ex) {
			logger.warn("IdempotencyObserver " + this.delegate.getClass().getName() + " failed in step " + step + " of "
					+ policy.name() + "; the call's outcome is unaffected", ex);
		}
	}

	@Override
	public IdempotencyObserver forAsyncCall() {
		try {
			IdempotencyObserver bound = this.delegate.forAsyncCall();
			return (bound == this.delegate) ? this : new FailSafeObserver(bound);
		}
		catch (RuntimeException ex) {
			logger.warn("IdempotencyObserver " + this.delegate.getClass().getName()
					+ " failed in forAsyncCall; it is notified without its calling context", ex);
			return this;
		}
	}

	private void notify(String callback, IdempotencyPolicy policy, Consumer<IdempotencyObserver> call) {
		try {
			call.accept(this.delegate);
		}
		catch (RuntimeException ex) {
			logger.warn("IdempotencyObserver " + this.delegate.getClass().getName() + " failed in " + callback + " of "
					+ policy.name() + "; the call's outcome is unaffected", ex);
		}
	}

}
