package io.github.idempotent.testsupport;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;

/**
 * Handlers whose responses are not all final, on Spring MVC and WebFlux alike (a plain
 * {@code ResponseEntity}), with a ledger of their runs per key: one answers 503 on its
 * first run for a key and 200 after (a dependency that was briefly down), one answers 400
 * to an amount that is not positive (a request the client can correct). Each comes with
 * the default {@code releaseOnStatus} and with one of its own.
 */
@RestController
public class FinalOutcomesController {

	private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

	@PostMapping("/outcomes/unavailable-once")
	@Idempotent
	public ResponseEntity<Map<String, Object>> unavailableOnce(@RequestHeader("Idempotency-Key") String key) {
		return unavailableOnce("unavailable-once", key);
	}

	@PostMapping("/outcomes/unavailable-once-kept")
	@Idempotent(releaseOnStatus = "none")
	public ResponseEntity<Map<String, Object>> unavailableOnceKept(@RequestHeader("Idempotency-Key") String key) {
		return unavailableOnce("unavailable-once-kept", key);
	}

	@PostMapping("/outcomes/checked")
	@Idempotent
	public ResponseEntity<Map<String, Object>> checked(@RequestHeader("Idempotency-Key") String key,
			@RequestBody Amount amount) {
		return checked("checked", key, amount);
	}

	@PostMapping("/outcomes/checked-released")
	@Idempotent(releaseOnStatus = "${outcomes.checked-released:400}")
	public ResponseEntity<Map<String, Object>> checkedReleased(@RequestHeader("Idempotency-Key") String key,
			@RequestBody Amount amount) {
		return checked("checked-released", key, amount);
	}

	/**
	 * How many times the handler behind {@code endpoint} ran for {@code key}.
	 */
	public int runs(String endpoint, String key) {
		AtomicInteger count = this.runs.get(endpoint + " " + key);
		return (count != null) ? count.get() : 0;
	}

	private int run(String endpoint, String key) {
		return this.runs.computeIfAbsent(endpoint + " " + key, (k) -> new AtomicInteger()).incrementAndGet();
	}

	private ResponseEntity<Map<String, Object>> unavailableOnce(String endpoint, String key) {
		int run = run(endpoint, key);
		if (run == 1) {
			return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
				.header("Retry-After", "1")
				.body(Map.of("error", "the ledger is briefly down", "run", run));
		}
		return ResponseEntity.ok(Map.of("paid", true, "run", run));
	}

	private ResponseEntity<Map<String, Object>> checked(String endpoint, String key, Amount amount) {
		int run = run(endpoint, key);
		if (amount.amount() <= 0) {
			return ResponseEntity.badRequest().body(Map.of("error", "amount must be positive", "run", run));
		}
		return ResponseEntity.status(HttpStatus.CREATED).body(Map.of("amount", amount.amount(), "run", run));
	}

	public record Amount(long amount) {
	}

}
