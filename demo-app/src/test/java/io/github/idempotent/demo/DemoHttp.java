package io.github.idempotent.demo;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Plain HTTP against the running demo, so tests see exactly the bytes and headers a
 * client sees.
 */
final class DemoHttp {

	private static final JsonMapper json = JsonMapper.builder().build();

	private final HttpClient client = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	private final String base;

	DemoHttp(int port) {
		this.base = "http://127.0.0.1:" + port;
	}

	String base() {
		return this.base;
	}

	Response get(String path) {
		return send(HttpRequest.newBuilder(URI.create(this.base + path)).GET());
	}

	Response delete(String path) {
		return send(HttpRequest.newBuilder(URI.create(this.base + path)).DELETE());
	}

	Response post(String path, String body) {
		return post(path, body, null);
	}

	Response post(String path, String body, String idempotencyKey) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(this.base + path))
			.header("Content-Type", "application/json")
			.POST((body != null) ? HttpRequest.BodyPublishers.ofString(body) : HttpRequest.BodyPublishers.noBody());
		if (idempotencyKey != null) {
			request.header("Idempotency-Key", idempotencyKey);
		}
		return send(request);
	}

	private Response send(HttpRequest.Builder request) {
		try {
			HttpResponse<String> response = this.client.send(request.timeout(Duration.ofSeconds(30)).build(),
					HttpResponse.BodyHandlers.ofString());
			return new Response(response.statusCode(), response.headers(), response.body());
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	long openAccount(long balance) {
		Response response = post("/api/accounts", "{\"holder\":\"test\",\"balance\":" + balance + "}");
		return response.expect(201).json().get("id").asLong();
	}

	long balance(long accountId) {
		return get("/api/accounts/" + accountId).expect(200).json().get("balance").asLong();
	}

	Response createOrder(String orderNo, long accountId, long amount) {
		return post("/api/orders",
				"{\"orderNo\":\"" + orderNo + "\",\"accountId\":" + accountId + ",\"amount\":" + amount + "}");
	}

	Response pay(String orderNo, String key) {
		return post("/api/payments", "{\"orderNo\":\"" + orderNo + "\"}", key);
	}

	Response payDeliveringTheEventTwice(String orderNo, String key) {
		return post("/api/payments?deliverEventTwice=true", "{\"orderNo\":\"" + orderNo + "\"}", key);
	}

	long deliveries() {
		return get("/api/shipping/deliveries").expect(200).json().get("deliveries").asLong();
	}

	/**
	 * What {@code @Idempotent} did for one operation so far ({@code GET /api/stats}):
	 * executed, replayed and rejected, zeros before its first call.
	 */
	Map<String, Long> stats(String operation) {
		JsonNode counts = get("/api/stats").expect(200).json().get(operation);
		Map<String, Long> stats = new HashMap<>();
		for (String outcome : List.of("executed", "replayed", "rejected")) {
			stats.put(outcome, (counts != null) ? counts.get(outcome).asLong() : 0L);
		}
		return stats;
	}

	String orderStatus(String orderNo) {
		return get("/api/orders/" + orderNo).expect(200).json().get("status").asString();
	}

	record Response(int status, HttpHeaders headers, String body) {

		JsonNode json() {
			return json.readTree(this.body);
		}

		boolean replayed() {
			return "true".equals(this.headers.firstValue("Idempotent-Replayed").orElse(null));
		}

		String contentType() {
			return this.headers.firstValue("Content-Type").orElse("");
		}

		Response expect(int expected) {
			if (this.status != expected) {
				throw new AssertionError("Expected " + expected + " but got " + this.status + ": " + this.body);
			}
			return this;
		}

	}

}
