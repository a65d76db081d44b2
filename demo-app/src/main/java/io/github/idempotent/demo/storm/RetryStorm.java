package io.github.idempotent.demo.storm;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClient;

import io.github.idempotent.client.IdempotentRetryInterceptor;

/**
 * Fires a retry storm at a running demo and prints what happened: many clients send the
 * same payment with the same key at once, some drop their answer and send it again, and a
 * few more lost their key as well and send it with new keys. The balance must drop once.
 * <p>
 * {@code ./mvnw -pl demo-app -am spring-boot:run
 * -Dspring-boot.run.main-class=io.github.idempotent.demo.storm.RetryStorm
 * -Dspring-boot.run.arguments="--url=http://localhost:8080 --clients=50"}
 */
public final class RetryStorm {

	private static final ParameterizedTypeReference<Map<String, Object>> JSON = new ParameterizedTypeReference<>() {
	};

	private final String url;

	private final long accountId;

	private final long amount;

	private final int clients;

	private final double lose;

	private final int newKeys;

	/**
	 * Every HTTP attempt, retries included: "status" or "status replayed" or an error.
	 */
	private final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();

	private final AtomicInteger attemptCount = new AtomicInteger();

	private final AtomicInteger logicalCalls = new AtomicInteger();

	private RetryStorm(Map<String, String> args) {
		this.url = args.getOrDefault("url", "http://localhost:8080");
		this.accountId = Long.parseLong(args.getOrDefault("account", "1"));
		this.amount = Long.parseLong(args.getOrDefault("amount", "250"));
		this.clients = Integer.parseInt(args.getOrDefault("clients", "50"));
		this.lose = Double.parseDouble(args.getOrDefault("lose", "0.3"));
		this.newKeys = Integer.parseInt(args.getOrDefault("new-keys", "5"));
	}

	public static void main(String[] args) throws Exception {
		Map<String, String> options = new TreeMap<>();
		for (String arg : args) {
			if (!arg.startsWith("--") || !arg.contains("=")) {
				System.err.println("Usage: RetryStorm [--url=http://localhost:8080] [--account=1] [--amount=250] "
						+ "[--clients=50] [--lose=0.3] [--new-keys=5]");
				System.exit(2);
			}
			options.put(arg.substring(2, arg.indexOf('=')), arg.substring(arg.indexOf('=') + 1));
		}
		new RetryStorm(options).run();
	}

	private void run() throws Exception {
		RestClient plain = RestClient.builder()
			.requestFactory(new JdkClientHttpRequestFactory())
			.baseUrl(this.url)
			.build();
		RestClient retrying = RestClient.builder()
			.requestFactory(new JdkClientHttpRequestFactory())
			.baseUrl(this.url)
			// Outermost: one key per logical call, retries on 409 in progress, 5xx and
			// I/O errors. Inside it, every attempt is counted.
			.requestInterceptor(IdempotentRetryInterceptor.builder().maxRetries(5).build())
			.requestInterceptor(counter())
			.build();

		long before = balance(plain);
		long executedBefore = executed(plain);
		String orderNo = "storm-" + UUID.randomUUID().toString().substring(0, 8);
		plain.post()
			.uri("/api/orders")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("orderNo", orderNo, "accountId", this.accountId, "amount", this.amount))
			.retrieve()
			.toBodilessEntity();
		String key = UUID.randomUUID().toString();
		System.out.printf("Retry storm at %s: order %s of %d on account %d, key %s%n", this.url, orderNo, this.amount,
				this.accountId, key);
		System.out.printf(
				"  %d clients send it at once with that key; %.0f%% of them lose the answer and send it "
						+ "again; then %d send it with new keys (key lost too)%n",
				this.clients, this.lose * 100, this.newKeys);

		Set<String> paymentIds = ConcurrentHashMap.newKeySet();
		ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
		ExecutorService pool = Executors.newFixedThreadPool(Math.min(this.clients, 64));
		CountDownLatch start = new CountDownLatch(1);
		List<Future<?>> calls = new ArrayList<>();
		for (int i = 0; i < this.clients; i++) {
			calls.add(pool.submit(() -> {
				start.await();
				boolean loseThis = ThreadLocalRandom.current().nextDouble() < this.lose;
				for (int send = 0; send < (loseThis ? 2 : 1); send++) {
					pay(retrying, orderNo, key, paymentIds, failures);
				}
				return null;
			}));
		}
		start.countDown();
		for (Future<?> call : calls) {
			call.get();
		}
		pool.shutdown();
		long executedWithKey = executed(plain) - executedBefore;
		for (int i = 0; i < this.newKeys; i++) {
			pay(retrying, orderNo, null, paymentIds, failures);
		}

		long after = balance(plain);
		long executedWithNewKeys = executed(plain) - executedBefore - executedWithKey;
		long debits = debits(plain, orderNo);
		System.out.println();
		System.out.printf("attempts sent:           %d (%d calls, %d interceptor retries)%n", this.attemptCount.get(),
				this.logicalCalls.get(), this.attemptCount.get() - this.logicalCalls.get());
		System.out.println("answers:                 " + new TreeMap<>(this.attempts));
		System.out.println("distinct payments:       " + paymentIds.size() + " " + paymentIds);
		System.out
			.println("executions, storm's key: " + executedWithKey + " (server count of POST /api/payments runs)");
		System.out.println("executions, new keys:    " + executedWithNewKeys
				+ " (each found the order PAID: the state machine refused to debit)");
		System.out.println("debits in the ledger:    " + debits);
		System.out.printf("balance:                 %d -> %d (%s)%n", before, after,
				(before - after == this.amount) ? "debited once" : "DEBITED " + (before - after));
		if (!failures.isEmpty()) {
			System.out.println("failed calls:         " + failures.size() + ", first: " + failures.peek());
		}
		System.exit((paymentIds.size() == 1 && debits == 1 && before - after == this.amount) ? 0 : 1);
	}

	private void pay(RestClient client, String orderNo, String key, Set<String> paymentIds,
			ConcurrentLinkedQueue<String> failures) {
		this.logicalCalls.incrementAndGet();
		try {
			RestClient.RequestBodySpec request = client.post()
				.uri("/api/payments")
				.contentType(MediaType.APPLICATION_JSON);
			if (key != null) {
				request.header("Idempotency-Key", key);
			}
			ResponseEntity<Map<String, Object>> response = request.body(Map.of("orderNo", orderNo))
				.retrieve()
				.toEntity(JSON);
			paymentIds.add(String.valueOf(response.getBody().get("paymentId")));
		}
		catch (RuntimeException ex) {
			failures.add(ex.toString());
		}
	}

	private ClientHttpRequestInterceptor counter() {
		return (request, body, execution) -> {
			this.attemptCount.incrementAndGet();
			try {
				ClientHttpResponse response = execution.execute(request, body);
				HttpStatusCode status = response.getStatusCode();
				boolean replayed = "true".equals(response.getHeaders().getFirst("Idempotent-Replayed"));
				count(status.value() + (replayed ? " replayed" : ""));
				return response;
			}
			catch (IOException ex) {
				count(ex.getClass().getSimpleName());
				throw ex;
			}
		};
	}

	private void count(String outcome) {
		this.attempts.computeIfAbsent(outcome, (k) -> new AtomicInteger()).incrementAndGet();
	}

	private long balance(RestClient client) {
		Map<String, Object> account = client.get().uri("/api/accounts/{id}", this.accountId).retrieve().body(JSON);
		return ((Number) account.get("balance")).longValue();
	}

	private long debits(RestClient client, String orderNo) {
		List<Map<String, Object>> ledger = client.get()
			.uri("/api/accounts/{id}/ledger", this.accountId)
			.retrieve()
			.body(new ParameterizedTypeReference<>() {
			});
		return ledger.stream()
			.filter((entry) -> orderNo.equals(entry.get("orderNo")) && "PAYMENT".equals(entry.get("kind")))
			.count();
	}

	private long executed(RestClient client) {
		Map<String, Object> stats = client.get().uri("/api/stats").retrieve().body(JSON);
		Object payments = stats.get("payments");
		return (payments instanceof Map<?, ?> counts) ? ((Number) counts.get("executed")).longValue() : 0;
	}

}
