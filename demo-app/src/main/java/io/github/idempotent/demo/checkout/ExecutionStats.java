package io.github.idempotent.demo.checkout;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.springframework.stereotype.Component;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.core.IdempotencyException;
import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyPolicy;

/**
 * Counts what {@code @Idempotent} did per operation, so the demo can show that a storm of
 * retries ran the payment once: {@code GET /api/stats}.
 */
@Component
@RestController
class ExecutionStats implements IdempotencyObserver {

	private final Map<String, Counts> operations = new ConcurrentHashMap<>();

	@Override
	public void executed(IdempotencyPolicy policy, String key) {
		counts(policy).executed.incrementAndGet();
	}

	@Override
	public void replayed(IdempotencyPolicy policy, String key) {
		counts(policy).replayed.incrementAndGet();
	}

	@Override
	public void rejected(IdempotencyPolicy policy, String key, IdempotencyException reason) {
		counts(policy).rejected.incrementAndGet();
	}

	private Counts counts(IdempotencyPolicy policy) {
		return this.operations.computeIfAbsent(policy.name(), (name) -> new Counts());
	}

	@GetMapping("/api/stats")
	Map<String, Map<String, Long>> stats() {
		Map<String, Map<String, Long>> stats = new TreeMap<>();
		this.operations.forEach((name, counts) -> stats.put(name, Map.of("executed", counts.executed.get(), "replayed",
				counts.replayed.get(), "rejected", counts.rejected.get())));
		return stats;
	}

	private static final class Counts {

		final AtomicLong executed = new AtomicLong();

		final AtomicLong replayed = new AtomicLong();

		final AtomicLong rejected = new AtomicLong();

	}

}
