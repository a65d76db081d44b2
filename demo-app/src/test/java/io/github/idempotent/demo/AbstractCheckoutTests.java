package io.github.idempotent.demo;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.web.client.RestClient;

import io.github.idempotent.client.IdempotentRetryInterceptor;
import io.github.idempotent.demo.DemoHttp.Response;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The checkout over real HTTP, the same suite for every database. Every test opens its
 * own account and uses fresh order numbers and keys, so reruns against a persistent
 * database or a shared Redis start clean.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "idempotent.ttl=10m")
abstract class AbstractCheckoutTests {

	private static final int STORM = 50;

	@LocalServerPort
	int port;

	@LocalManagementPort
	int managementPort;

	@Autowired
	JdbcClient jdbc;

	DemoHttp http;

	@BeforeEach
	void client() {
		this.http = new DemoHttp(this.port);
	}

	static String unique(String prefix) {
		return prefix + "-" + UUID.randomUUID().toString().substring(0, 13);
	}

	@Test
	void concurrentIdenticalPaymentsDebitOnce() throws Exception {
		long account = this.http.openAccount(10_000);
		String orderNo = unique("storm");
		this.http.createOrder(orderNo, account, 250).expect(201);
		String key = unique("key");
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService pool = Executors.newFixedThreadPool(STORM);
		List<Response> responses = new ArrayList<>();
		try {
			List<Callable<Response>> calls = new ArrayList<>();
			for (int i = 0; i < STORM; i++) {
				calls.add(() -> {
					start.await();
					return this.http.pay(orderNo, key);
				});
			}
			List<Future<Response>> futures = new ArrayList<>();
			calls.forEach((call) -> futures.add(pool.submit(call)));
			start.countDown();
			for (Future<Response> future : futures) {
				responses.add(future.get());
			}
		}
		finally {
			pool.shutdownNow();
		}
		List<Response> successes = responses.stream().filter((r) -> r.status() / 100 == 2).toList();
		assertThat(successes).as("2xx answers").isNotEmpty();
		assertThat(successes).extracting(Response::body).as("every 2xx body").containsOnly(successes.get(0).body());
		assertThat(successes).extracting(Response::status).containsOnly(201);
		assertThat(successes.stream().filter((r) -> !r.replayed())).as("answers that were not replays").hasSize(1);
		assertThat(responses).extracting(Response::status).as("non-2xx may only be 'in progress'").isSubsetOf(201, 409);
		assertThat(this.http.balance(account)).isEqualTo(9_750);
		assertThat(ledgerRows(orderNo)).isOne();
		assertThat(this.http.orderStatus(orderNo)).isEqualTo("PAID");
	}

	@Test
	void sameOrderPaidWithAnotherKeyIsNotDebitedAgain() {
		long account = this.http.openAccount(1_000);
		String orderNo = unique("rekey");
		this.http.createOrder(orderNo, account, 300).expect(201);
		Response first = this.http.pay(orderNo, unique("key")).expect(201);
		// The client lost its key as well as the response: a new key gets past the
		// idempotency store, and the order's state machine stops the second debit.
		Response second = this.http.pay(orderNo, unique("key")).expect(200);
		assertThat(second.replayed()).isFalse();
		assertThat(second.json().get("paymentId")).isEqualTo(first.json().get("paymentId"));
		assertThat(second.body()).isEqualTo(first.body());
		assertThat(this.http.balance(account)).isEqualTo(700);
		assertThat(ledgerRows(orderNo)).isOne();
	}

	@Test
	void aPaymentIsReadThroughTheActuatorButNotDeleted() {
		long account = this.http.openAccount(1_000);
		String orderNo = unique("actuator");
		this.http.createOrder(orderNo, account, 100).expect(201);
		String key = unique("key");
		this.http.pay(orderNo, key).expect(201);
		// Not on the API's port: the records' keys and scopes are not for its clients.
		assertThat(this.http.get("/actuator/idempotency/payments/" + key).status()).isEqualTo(404);
		DemoHttp management = new DemoHttp(this.managementPort);
		Response record = management.get("/actuator/idempotency/payments/" + key).expect(200);
		assertThat(record.json().get("state").asString()).isEqualTo("COMPLETED");
		assertThat(record.json().get("resultSize").asInt()).isPositive();
		assertThat(record.body()).doesNotContain(orderNo);
		assertThat(management.get("/actuator/idempotency").expect(200).json().has("records")).isTrue();
		assertThat(management.delete("/actuator/idempotency/payments/" + key).status()).isIn(404, 405);
		assertThat(management.get("/actuator/idempotency/payments/" + key).status()).isEqualTo(200);
	}

	@Test
	void theOpenApiDocumentGivesThePaymentsStatusesAndItsIdempotencyContract() {
		var payments = this.http.get("/v3/api-docs").expect(200).json().get("paths").get("/api/payments").get("post");
		assertThat(payments.get("responses").has("201")).isTrue();
		assertThat(payments.get("responses").has("200")).isTrue();
		assertThat(payments.get("responses").has("409")).isTrue();
		assertThat(payments.toString()).contains("Idempotency-Key");
	}

	@Test
	void duplicateOrderCreateReturnsTheSameOrder() {
		long account = this.http.openAccount(1_000);
		String orderNo = unique("dup");
		Response first = this.http.createOrder(orderNo, account, 250).expect(201);
		Response second = this.http.createOrder(orderNo, account, 250).expect(200);
		assertThat(second.body()).isEqualTo(first.body());
		assertThat(first.json().get("status").asString()).isEqualTo("CREATED");
		assertThat(this.jdbc.sql("SELECT COUNT(*) FROM orders WHERE order_no = ?")
			.param(orderNo)
			.query(Long.class)
			.single()).isOne();
		Response other = this.http.createOrder(orderNo, account, 999).expect(409);
		assertThat(other.contentType()).startsWith("application/problem+json");
	}

	@Test
	void refundTwiceCreditsOnce() {
		long account = this.http.openAccount(1_000);
		String orderNo = unique("refund");
		this.http.createOrder(orderNo, account, 400).expect(201);
		this.http.pay(orderNo, unique("key")).expect(201);
		assertThat(this.http.balance(account)).isEqualTo(600);
		String key = unique("key");
		Response refund = this.http.post("/api/orders/" + orderNo + "/refund", null, key).expect(200);
		assertThat(refund.json().get("status").asString()).isEqualTo("REFUNDED");
		Response replay = this.http.post("/api/orders/" + orderNo + "/refund", null, key).expect(200);
		assertThat(replay.replayed()).isTrue();
		assertThat(replay.body()).isEqualTo(refund.body());
		this.http.post("/api/orders/" + orderNo + "/refund", null, unique("key")).expect(200);
		assertThat(this.http.balance(account)).isEqualTo(1_000);
		assertThat(this.jdbc.sql("SELECT kind FROM ledger_entries WHERE order_no = ? ORDER BY kind")
			.param(orderNo)
			.query(String.class)
			.list()).containsExactly("PAYMENT", "REFUND");
	}

	@Test
	void illegalTransitionsAreConflictProblems() {
		long account = this.http.openAccount(1_000);
		String orderNo = unique("illegal");
		this.http.createOrder(orderNo, account, 100).expect(201);
		Response refund = this.http.post("/api/orders/" + orderNo + "/refund", null, unique("key")).expect(409);
		assertThat(refund.contentType()).startsWith("application/problem+json");
		assertThat(refund.headers().firstValue("Retry-After")).as("a state conflict is not 'retry later'").isEmpty();
		assertThat(refund.json().get("type").asString()).isEqualTo("urn:checkout-demo:illegal-transition");
		assertThat(refund.json().get("orderStatus").asString()).isEqualTo("CREATED");
		this.http.post("/api/orders/" + orderNo + "/ship", null).expect(409);
		this.http.post("/api/orders/" + orderNo + "/complete", null).expect(409);
		assertThat(
				this.http.post("/api/orders/" + orderNo + "/cancel", null).expect(200).json().get("status").asString())
			.isEqualTo("CANCELLED");
		this.http.post("/api/orders/" + orderNo + "/cancel", null).expect(200);
		Response pay = this.http.pay(orderNo, unique("key")).expect(409);
		assertThat(pay.json().get("detail").asString()).contains("from CANCELLED to PAID");
		assertThat(this.http.balance(account)).isEqualTo(1_000);
		assertThat(ledgerRows(orderNo)).isZero();
	}

	@Test
	void paidOrderShipsAndCompletes() {
		long account = this.http.openAccount(1_000);
		String orderNo = unique("ship");
		this.http.createOrder(orderNo, account, 100).expect(201);
		this.http.pay(orderNo, unique("key")).expect(201);
		this.http.post("/api/orders/" + orderNo + "/ship", null).expect(200);
		this.http.post("/api/orders/" + orderNo + "/complete", null).expect(200);
		assertThat(this.http.orderStatus(orderNo)).isEqualTo("COMPLETED");
		this.http.post("/api/orders/" + orderNo + "/refund", null, unique("key")).expect(409);
	}

	@Test
	void insufficientFundsIsAProblemAndReleasesTheKey() {
		long account = this.http.openAccount(100);
		String orderNo = unique("poor");
		this.http.createOrder(orderNo, account, 250).expect(201);
		String key = unique("key");
		Response first = this.http.pay(orderNo, key).expect(422);
		assertThat(first.contentType()).startsWith("application/problem+json");
		assertThat(first.json().get("type").asString()).isEqualTo("urn:checkout-demo:insufficient-funds");
		assertThat(this.http.orderStatus(orderNo)).isEqualTo("CREATED");
		// Released, not stored: the retry runs again rather than replaying the refusal.
		Response retry = this.http.pay(orderNo, key).expect(422);
		assertThat(retry.replayed()).isFalse();
		assertThat(this.http.balance(account)).isEqualTo(100);
		assertThat(ledgerRows(orderNo)).isZero();
	}

	@Test
	void paymentWithoutKeyIsRefused() {
		Response response = this.http.pay(unique("nokey"), null).expect(400);
		assertThat(response.contentType()).startsWith("application/problem+json");
	}

	@Test
	void accountOneIsOpenAtStartUp() {
		assertThat(this.http.get("/api/accounts/1").expect(200).json().get("balance").asLong()).isPositive();
		assertThat(this.http.get("/").expect(200).body()).contains("<button id=\"pay\"");
	}

	@Test
	void retryInterceptorThroughALossyProxyPaysOnce() throws Exception {
		long account = this.http.openAccount(1_000);
		String orderNo = unique("lossy");
		this.http.createOrder(orderNo, account, 150).expect(201);
		try (LossyProxy proxy = new LossyProxy(this.http.base())) {
			RestClient client = RestClient.builder()
				.requestFactory(new JdkClientHttpRequestFactory())
				.baseUrl(proxy.base())
				.requestInterceptor(IdempotentRetryInterceptor.builder().delay(Duration.ofMillis(50)).build())
				.build();
			String body = client.post()
				.uri("/api/payments")
				.header("Content-Type", "application/json")
				.body("{\"orderNo\":\"" + orderNo + "\"}")
				.retrieve()
				.body(String.class);
			assertThat(body).contains(orderNo);
			assertThat(proxy.keys).hasSize(2).doesNotContainNull().containsOnly(proxy.keys.get(0));
			assertThat(proxy.replayed).containsExactly(false, true);
		}
		assertThat(this.http.balance(account)).isEqualTo(850);
		assertThat(ledgerRows(orderNo)).isOne();
	}

	@Test
	void paymentEventDeliveredTwiceShipsOnce() {
		long account = this.http.openAccount(1_000);
		String orderNo = unique("ship");
		this.http.createOrder(orderNo, account, 200).expect(201);
		long deliveriesBefore = this.http.deliveries();
		String paymentId = this.http.payDeliveringTheEventTwice(orderNo, unique("key"))
			.expect(201)
			.json()
			.get("paymentId")
			.asString();
		// Paying the paid order again with a new key publishes the event a third time.
		this.http.payDeliveringTheEventTwice(orderNo, unique("key")).expect(200);
		ShippingAssertions.awaitDeliveries(this.http, deliveriesBefore + 4);
		ShippingAssertions.awaitShipped(() -> shipments(paymentId));
		assertThat(shipments(paymentId)).isOne();
		assertThat(this.http.get("/api/accounts/" + account + "/shipments").expect(200).json().size()).isOne();
	}

	/**
	 * The event delivered twice in-process: the second delivery arrives while the first
	 * still ships, on an {@code @Async} thread that nobody retries. It waits for the
	 * first one's shipment and replays it, as docs/demo.md shows: executed 1, replayed 1,
	 * and nothing logged at ERROR.
	 */
	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void paymentEventDeliveredTwiceIsExecutedOnceAndReplayedOnce(CapturedOutput output) {
		long account = this.http.openAccount(1_000);
		String orderNo = unique("replay");
		this.http.createOrder(orderNo, account, 200).expect(201);
		Map<String, Long> before = this.http.stats("shipping");
		String paymentId = this.http.payDeliveringTheEventTwice(orderNo, unique("key"))
			.expect(201)
			.json()
			.get("paymentId")
			.asString();
		// Every delivery ends as executed, replayed or rejected: wait for both to end.
		await().atMost(Duration.ofSeconds(60))
			.until(() -> total(this.http.stats("shipping")) - total(before) >= 2 || output.getAll().contains("ERROR"));
		Map<String, Long> after = this.http.stats("shipping");
		assertThat(output.getAll()).as("log").doesNotContain(" ERROR ").doesNotContain("InProgressException");
		assertThat(after.get("executed") - before.get("executed")).as("executed").isOne();
		assertThat(after.get("replayed") - before.get("replayed")).as("replayed").isOne();
		assertThat(after.get("rejected") - before.get("rejected")).as("rejected").isZero();
		assertThat(shipments(paymentId)).isOne();
	}

	private static long total(Map<String, Long> stats) {
		return stats.values().stream().mapToLong(Long::longValue).sum();
	}

	long shipments(String paymentId) {
		return this.jdbc.sql("SELECT COUNT(*) FROM shipments WHERE payment_id = ?")
			.param(paymentId)
			.query(Long.class)
			.single();
	}

	long ledgerRows(String orderNo) {
		return this.jdbc.sql("SELECT COUNT(*) FROM ledger_entries WHERE order_no = ?")
			.param(orderNo)
			.query(Long.class)
			.single();
	}

	/**
	 * Forwards requests to the demo; the first response is read from the demo (the
	 * payment has run) and then lost: the client's connection closes without an answer.
	 */
	static final class LossyProxy implements AutoCloseable {

		final List<String> keys = new CopyOnWriteArrayList<>();

		final List<Boolean> replayed = new CopyOnWriteArrayList<>();

		private final AtomicBoolean lose = new AtomicBoolean(true);

		private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

		private final HttpServer server;

		private final String target;

		LossyProxy(String target) throws IOException {
			this.target = target;
			this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
			this.server.createContext("/", this::forward);
			this.server.start();
		}

		String base() {
			return "http://127.0.0.1:" + this.server.getAddress().getPort();
		}

		private void forward(HttpExchange exchange) throws IOException {
			byte[] body;
			try (InputStream in = exchange.getRequestBody()) {
				body = in.readAllBytes();
			}
			String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
			this.keys.add(key);
			HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(this.target + exchange.getRequestURI()))
				.method(exchange.getRequestMethod(), HttpRequest.BodyPublishers.ofByteArray(body))
				.header("Content-Type", "application/json");
			if (key != null) {
				request.header("Idempotency-Key", key);
			}
			HttpResponse<byte[]> response;
			try {
				response = this.client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				exchange.close();
				return;
			}
			this.replayed.add(response.headers().firstValue("Idempotent-Replayed").isPresent());
			if (this.lose.compareAndSet(true, false)) {
				exchange.close();
				return;
			}
			response.headers()
				.firstValue("Content-Type")
				.ifPresent((type) -> exchange.getResponseHeaders().set("Content-Type", type));
			exchange.sendResponseHeaders(response.statusCode(), response.body().length);
			exchange.getResponseBody().write(response.body());
			exchange.close();
		}

		@Override
		public void close() {
			this.server.stop(0);
		}

	}

}
