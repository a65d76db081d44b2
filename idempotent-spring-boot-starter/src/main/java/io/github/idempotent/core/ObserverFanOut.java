package io.github.idempotent.core;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * {@link IdempotencyObserver#composite} and {@link IdempotencyObserver#failSafe}: passes
 * each callback to every observer in turn; a fail-safe one logs what an observer throws
 * instead of letting it through.
 */
final class ObserverFanOut implements IdempotencyObserver {

	private static final Log logger = LogFactory.getLog(ObserverFanOut.class);

	private final List<IdempotencyObserver> observers;

	final boolean failSafe;

	ObserverFanOut(List<IdempotencyObserver> observers, boolean failSafe) {
		this.observers = observers;
		this.failSafe = failSafe;
	}

	@Override
	public void executed(IdempotencyPolicy policy, String key) {
		each("executed", policy, (observer) -> observer.executed(policy, key));
	}

	@Override
	public void replayed(IdempotencyPolicy policy, String key) {
		each("replayed", policy, (observer) -> observer.replayed(policy, key));
	}

	@Override
	public void skipped(IdempotencyPolicy policy, String key) {
		each("skipped", policy, (observer) -> observer.skipped(policy, key));
	}

	@Override
	public void flagged(IdempotencyPolicy policy, String key) {
		each("flagged", policy, (observer) -> observer.flagged(policy, key));
	}

	@Override
	public void rejected(IdempotencyPolicy policy, String key, IdempotencyException reason) {
		each("rejected", policy, (observer) -> observer.rejected(policy, key, reason));
	}

	@Override
	public void bypassed(IdempotencyPolicy policy, String key, RuntimeException storeFailure) {
		each("bypassed", policy, (observer) -> observer.bypassed(policy, key, storeFailure));
	}

	@Override
	public void leaseLost(IdempotencyPolicy policy, String key) {
		each("leaseLost", policy, (observer) -> observer.leaseLost(policy, key));
	}

	@Override
	public void maxDurationExceeded(IdempotencyPolicy policy, String key) {
		each("maxDurationExceeded", policy, (observer) -> observer.maxDurationExceeded(policy, key));
	}

	@Override
	public void step(IdempotencyPolicy policy, String key, Step step) {
		// Not each: no capturing lambda on every call.
		for (int i = 0; i < this.observers.size(); i++) {
			IdempotencyObserver observer = this.observers.get(i);
			try {
				observer.step(policy, key, step);
			}
			catch (RuntimeException ex) {
				failed(observer, "step " + step + " of " + policy.name() + "; the call's outcome is unaffected", ex);
			}
		}
	}

	@Override
	public IdempotencyObserver forAsyncCall() {
		List<IdempotencyObserver> bound = new ArrayList<>(this.observers.size());
		boolean changed = false;
		for (IdempotencyObserver observer : this.observers) {
			IdempotencyObserver forCall = observer;
			try {
				forCall = observer.forAsyncCall();
			}
			catch (RuntimeException ex) {
				failed(observer, "forAsyncCall; it is notified without its calling context", ex);
			}
			bound.add(forCall);
			changed |= forCall != observer;
		}
		return changed ? new ObserverFanOut(bound, this.failSafe) : this;
	}

	private void each(String callback, IdempotencyPolicy policy, Consumer<IdempotencyObserver> call) {
		for (IdempotencyObserver observer : this.observers) {
			try {
				call.accept(observer);
			}
			catch (RuntimeException ex) {
				failed(observer, callback + " of " + policy.name() + "; the call's outcome is unaffected", ex);
			}
		}
	}

	private void failed(IdempotencyObserver observer, String where, RuntimeException ex) {
		if (!this.failSafe) {
			throw ex;
		}
		logger.warn("IdempotencyObserver " + observer.getClass().getName() + " failed in " + where, ex);
	}

}
