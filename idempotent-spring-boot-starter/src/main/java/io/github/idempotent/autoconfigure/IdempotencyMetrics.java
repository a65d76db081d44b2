package io.github.idempotent.autoconfigure;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;

import io.github.idempotent.core.IdempotencyException;
import io.github.idempotent.core.IdempotencyInProgressException;
import io.github.idempotent.core.IdempotencyStoreFullException;
import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyPolicy;

/**
 * The counter {@code idempotent.calls} by operation and outcome, as docs/operations.md
 * lists them. The registry is looked up on first use, so the order of auto-configurations
 * does not matter; without one nothing is counted.
 */
class IdempotencyMetrics implements IdempotencyObserver {

	private final ObjectProvider<MeterRegistry> registry;

	// Without a registry none is stored, and the next call looks again.
	private final Map<String, Counter> counters = new ConcurrentHashMap<>();

	IdempotencyMetrics(ObjectProvider<MeterRegistry> registry) {
		this.registry = registry;
	}

	@Override
	public void executed(IdempotencyPolicy policy, String key) {
		count(policy, "executed");
	}

	@Override
	public void replayed(IdempotencyPolicy policy, String key) {
		count(policy, "replayed");
	}

	@Override
	public void skipped(IdempotencyPolicy policy, String key) {
		count(policy, "skipped");
	}

	@Override
	public void flagged(IdempotencyPolicy policy, String key) {
		count(policy, "flagged");
	}

	@Override
	public void rejected(IdempotencyPolicy policy, String key, IdempotencyException reason) {
		count(policy, (reason instanceof IdempotencyInProgressException) ? "in_progress"
				: (reason instanceof IdempotencyStoreFullException) ? "store_full" : "key_reused");
	}

	@Override
	public void bypassed(IdempotencyPolicy policy, String key, RuntimeException storeFailure) {
		count(policy, "bypassed");
	}

	@Override
	public void leaseLost(IdempotencyPolicy policy, String key) {
		count(policy, "lease_lost");
	}

	@Override
	public void maxDurationExceeded(IdempotencyPolicy policy, String key) {
		count(policy, "max_duration_exceeded");
	}

	private void count(IdempotencyPolicy policy, String outcome) {
		Counter counter = this.counters.computeIfAbsent(policy.name() + '\n' + outcome, (id) -> {
			MeterRegistry registry = this.registry.getIfAvailable();
			return (registry != null) ? Counter.builder("idempotent.calls")
				.description("Calls of @Idempotent methods by outcome")
				.tag("operation", policy.name())
				.tag("outcome", outcome)
				.register(registry) : null;
		});
		if (counter != null) {
			counter.increment();
		}
	}

}
