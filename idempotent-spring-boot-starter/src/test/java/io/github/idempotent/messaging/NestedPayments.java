package io.github.idempotent.messaging;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.publisher.Mono;

import io.github.idempotent.annotation.Idempotent;

/**
 * A service that message listeners call, which names no scope and is scoped by its caller
 * over HTTP: its runs and the failures its listeners saw, per method. Public methods
 * only: the bean is a class-based proxy, which would run any other on its own empty
 * fields.
 */
public class NestedPayments {

	private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

	private final Map<String, List<RuntimeException>> failures = new ConcurrentHashMap<>();

	/**
	 * What a listener does with a message of commands ({@code alice:r1:10,bob:r1:10}):
	 * calls {@code method} of {@code payments} for each, and keeps what it threw before
	 * the container gets it.
	 */
	public static void handle(NestedPayments payments, String method, String commands) {
		try {
			for (String command : commands.split(",")) {
				String[] parts = command.split(":");
				PayCommand cmd = new PayCommand(parts[0], parts[1], Integer.parseInt(parts[2]));
				switch (method) {
					case "pay" -> payments.pay(cmd);
					case "pay-mono" -> payments.payMono(cmd).block();
					case "ship" -> payments.ship(cmd);
					default -> throw new IllegalArgumentException(method);
				}
			}
		}
		catch (RuntimeException ex) {
			payments.failures(method).add(ex);
			throw ex;
		}
	}

	public int runs(String method) {
		return this.runs.computeIfAbsent(method, (k) -> new AtomicInteger()).get();
	}

	public List<RuntimeException> failures(String method) {
		return this.failures.computeIfAbsent(method, (k) -> new CopyOnWriteArrayList<>());
	}

	@Idempotent(name = "nested-pay", key = "#cmd.ref()", payload = "#cmd.amount()")
	public String pay(PayCommand cmd) {
		return run("pay", cmd);
	}

	@Idempotent(name = "nested-pay-mono", key = "#cmd.ref()", payload = "#cmd.amount()")
	public Mono<String> payMono(PayCommand cmd) {
		return Mono.fromSupplier(() -> run("pay-mono", cmd));
	}

	@Idempotent(name = "nested-ship", payload = "#cmd.amount()")
	public String ship(PayCommand cmd) {
		return run("ship", cmd);
	}

	private String run(String method, PayCommand cmd) {
		return method + " receipt #" + this.runs.computeIfAbsent(method, (k) -> new AtomicInteger()).incrementAndGet()
				+ " for " + cmd.user();
	}

	public record PayCommand(String user, String ref, int amount) {

	}

}
