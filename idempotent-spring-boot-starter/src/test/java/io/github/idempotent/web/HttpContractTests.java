package io.github.idempotent.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.TestRedis;
import io.github.idempotent.web.WebTestApplication.Executions;
import io.github.idempotent.web.WebTestApplication.Gate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP contract over real HTTP, against the Redis store: one test per row of the
 * table in docs/http.md.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.retry-after=2s", "idempotent.store.type=redis" })
class HttpContractTests {

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
	}

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@LocalServerPort
	private int port;

	@Autowired
	private Executions executions;

	@Autowired
	private Gate gate;

	@BeforeEach
	void reset() {
		this.executions.reset();
	}

	@Test
	void firstCallRunsTheMethodAndEchoesTheKey() throws Exception {
		String key = newKey();
		HttpResponse<String> response = post("/payments", key, "{\"orderNo\":\"A-1\",\"amount\":250}");
		assertThat(response.statusCode()).isEqualTo(201);
		assertThat(response.headers().firstValue("Idempotency-Key")).hasValue(key);
		assertThat(response.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(response.headers().firstValue("Location")).hasValue("/payments/pay-1-A-1");
		assertThat(response.body()).contains("\"id\":\"pay-1-A-1\"");
		assertThat(this.executions.count("payments")).isEqualTo(1);
	}

	@Test
	void replayReturnsTheOriginalStatusHeadersAndBodyWithoutRunningTheMethod() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"A-2\",\"amount\":250}";
		HttpResponse<String> first = post("/payments", key, body);
		HttpResponse<String> replay = post("/payments", key, body);
		assertThat(replay.statusCode()).isEqualTo(201);
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
		assertThat(replay.headers().firstValue("X-Payment-Id")).isEqualTo(first.headers().firstValue("X-Payment-Id"));
		assertThat(replay.headers().firstValue("Cache-Control")).hasValue("no-store");
		assertThat(replay.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replay.headers().firstValue("Idempotency-Key")).hasValue(key);
		assertThat(replay.headers().allValues("Transfer-Encoding")).hasSizeLessThanOrEqualTo(1);
		assertThat(this.executions.count("payments")).isEqualTo(1);
	}

	@Test
	void replayOfAPlainReturnValueKeepsItsResponseStatus() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"O-1\",\"amount\":10}";
		HttpResponse<String> first = post("/orders", key, body);
		HttpResponse<String> replay = post("/orders", key, body);
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(replay.statusCode()).isEqualTo(201);
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.executions.count("orders")).isEqualTo(1);
	}

	@Test
	void duplicateWhileInProgressIsConflictWithRetryAfter() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"S-1\",\"amount\":5}";
		this.gate.reset();
		CompletableFuture<HttpResponse<String>> first = this.http.sendAsync(request("/gated-payments", key, body),
				HttpResponse.BodyHandlers.ofString());
		// The method is running, so the key is claimed; it stays in progress until the
		// gate opens.
		assertThat(this.gate.awaitEntered()).isTrue();
		HttpResponse<String> duplicate = post("/gated-payments", key, body);
		this.gate.open();
		assertThat(duplicate.statusCode()).isEqualTo(409);
		assertThat(duplicate.headers().firstValue("Retry-After")).hasValue("2");
		assertThat(duplicate.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(duplicate.body()).contains("\"status\":409").contains("\"idempotencyKey\":\"" + key + "\"");
		assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		assertThat(this.executions.count("gated")).isEqualTo(1);
	}

	@Test
	void sameKeyWithAnotherPayloadIsUnprocessable() throws Exception {
		String key = newKey();
		post("/payments", key, "{\"orderNo\":\"A-3\",\"amount\":250}");
		HttpResponse<String> reused = post("/payments", key, "{\"orderNo\":\"A-3\",\"amount\":999}");
		assertThat(reused.statusCode()).isEqualTo(422);
		assertThat(reused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(reused.body()).contains("\"idempotencyKey\":\"" + key + "\"");
		assertThat(this.executions.count("payments")).isEqualTo(1);
	}

	@Test
	void payloadsThatDifferOnlyInPropertyOrderAreTheSamePayload() throws Exception {
		String key = newKey();
		HttpResponse<String> first = post("/payments", key, "{\"orderNo\":\"A-4\",\"amount\":250}");
		HttpResponse<String> second = post("/payments", key, "{\"amount\":250,\"orderNo\":\"A-4\"}");
		assertThat(second.statusCode()).isEqualTo(201);
		assertThat(second.body()).isEqualTo(first.body());
		assertThat(this.executions.count("payments")).isEqualTo(1);
	}

	@Test
	void missingKeyIsBadRequest() throws Exception {
		HttpResponse<String> response = this.http.send(HttpRequest.newBuilder(uri("/payments"))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"orderNo\":\"A-5\",\"amount\":1}"))
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(response.body()).contains("Idempotency-Key");
		assertThat(this.executions.count("payments")).isZero();
	}

	@Test
	void malformedKeyIsBadRequest() throws Exception {
		HttpResponse<String> response = post("/payments", "\"unterminated", "{\"orderNo\":\"A-6\",\"amount\":1}");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.body()).contains("malformed");
		HttpResponse<String> tooLong = post("/payments", "k".repeat(256), "{\"orderNo\":\"A-6\",\"amount\":1}");
		assertThat(tooLong.statusCode()).isEqualTo(400);
		assertThat(tooLong.body()).contains("256 characters");
		HttpResponse<String> quotedTooLong = post("/payments", "\"" + "k".repeat(256) + "\"",
				"{\"orderNo\":\"A-6\",\"amount\":1}");
		assertThat(quotedTooLong.statusCode()).isEqualTo(400);
		assertThat(this.executions.count("payments")).isZero();
	}

	@Test
	void quotedAndBareKeysAreTheSameKey() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"A-7\",\"amount\":1}";
		HttpResponse<String> first = post("/payments", key, body);
		HttpResponse<String> quoted = post("/payments", "\"" + key + "\"", body);
		assertThat(quoted.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(quoted.body()).isEqualTo(first.body());
		assertThat(this.executions.count("payments")).isEqualTo(1);
	}

	@Test
	void applicationExceptionHandlingStaysAndARetryRunsAgain() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"D-1\",\"amount\":1}";
		HttpResponse<String> first = post("/declining-payments", key, body);
		assertThat(first.statusCode()).isEqualTo(402);
		assertThat(first.body()).contains("Card declined for order D-1");
		HttpResponse<String> retry = post("/declining-payments", key, body);
		assertThat(retry.statusCode()).isEqualTo(402);
		assertThat(this.executions.count("declining")).isEqualTo(2);
	}

	@Test
	void optionalKeyRunsUnprotectedWithoutAKey() throws Exception {
		for (int i = 0; i < 2; i++) {
			HttpResponse<String> response = this.http.send(HttpRequest.newBuilder(uri("/optional-payments"))
				.header("Content-Type", "application/json")
				.POST(HttpRequest.BodyPublishers.ofString("{\"orderNo\":\"P-1\",\"amount\":1}"))
				.build(), HttpResponse.BodyHandlers.ofString());
			assertThat(response.statusCode()).isEqualTo(200);
		}
		assertThat(this.executions.count("optional")).isEqualTo(2);
		String key = newKey();
		post("/optional-payments", key, "{\"orderNo\":\"P-1\",\"amount\":1}");
		post("/optional-payments", key, "{\"orderNo\":\"P-1\",\"amount\":1}");
		assertThat(this.executions.count("optional")).isEqualTo(3);
	}

	@Test
	void keyFromASpelExpressionOverTheHeaderArgument() throws Exception {
		String key = newKey();
		HttpResponse<String> first = post("/spel-payments", key, "{\"orderNo\":\"E-1\",\"amount\":1}");
		HttpResponse<String> replay = post("/spel-payments", key, "{\"orderNo\":\"E-1\",\"amount\":1}");
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.executions.count("spel")).isEqualTo(1);
	}

	@Test
	void authenticatedUsersWithTheSameKeyGetTheirOwnResults() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"U-1\",\"amount\":100}";
		HttpResponse<String> alice = send(request("/payments", key, body, "alice"));
		HttpResponse<String> bob = send(request("/payments", key, body, "bob"));
		HttpResponse<String> aliceAgain = send(request("/payments", key, body, "alice"));
		assertThat(alice.body()).contains("\"payer\":\"alice\"");
		assertThat(bob.statusCode()).isEqualTo(201);
		assertThat(bob.body()).contains("\"payer\":\"bob\"");
		assertThat(bob.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(aliceAgain.body()).isEqualTo(alice.body());
		assertThat(this.executions.count("payments")).isEqualTo(2);
	}

	@Test
	void aScopeExpressionSeparatesTenants() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"T-1\",\"amount\":1}";
		HttpResponse<String> acme = send(tenantRequest(key, body, "acme"));
		HttpResponse<String> globex = send(tenantRequest(key, body, "globex"));
		HttpResponse<String> acmeAgain = send(tenantRequest(key, body, "acme"));
		assertThat(acme.body()).contains("acme");
		assertThat(globex.body()).contains("globex");
		assertThat(acmeAgain.body()).isEqualTo(acme.body());
		assertThat(this.executions.count("tenant")).isEqualTo(2);
	}

	@Test
	void illegalStateTransitionIsConflictWithoutRetryAfter() throws Exception {
		HttpResponse<String> response = post("/refunds", newKey(), "{\"orderNo\":\"R-1\",\"amount\":1}");
		assertThat(response.statusCode()).isEqualTo(409);
		assertThat(response.headers().firstValue("Retry-After")).isEmpty();
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(response.body()).contains("\"currentState\":\"CREATED\"").contains("\"targetState\":\"REFUNDED\"");
	}

	@Test
	void stormOfConcurrentClientsRunsTheMethodOnce() throws Exception {
		int clients = 32;
		String key = newKey();
		String body = "{\"orderNo\":\"S-2\",\"amount\":7}";
		ExecutorService pool = Executors.newFixedThreadPool(clients);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<HttpResponse<String>>> futures = new ArrayList<>();
			for (int i = 0; i < clients; i++) {
				futures.add(pool.submit(() -> {
					start.await();
					return post("/slow-payments", key, body);
				}));
			}
			start.countDown();
			List<HttpResponse<String>> responses = new ArrayList<>();
			for (Future<HttpResponse<String>> future : futures) {
				responses.add(future.get(30, TimeUnit.SECONDS));
			}
			assertThat(this.executions.count("slow")).isEqualTo(1);
			List<HttpResponse<String>> successes = responses.stream().filter((r) -> r.statusCode() == 200).toList();
			assertThat(successes).isNotEmpty();
			assertThat(successes).extracting(HttpResponse::body).containsOnly(successes.get(0).body());
			for (HttpResponse<String> response : responses) {
				if (response.statusCode() == 409) {
					assertThat(response.headers().firstValue("Retry-After")).hasValue("2");
				}
				else {
					assertThat(response.statusCode()).isEqualTo(200);
				}
			}
			// After the storm, a retry is an identical replay.
			HttpResponse<String> retry = post("/slow-payments", key, body);
			assertThat(retry.body()).isEqualTo(successes.get(0).body());
			assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
			assertThat(this.executions.count("slow")).isEqualTo(1);
		}
		finally {
			pool.shutdownNow();
		}
	}

	private HttpResponse<String> post(String path, String key, String body) throws Exception {
		return send(request(path, key, body));
	}

	private HttpResponse<String> send(HttpRequest request) throws Exception {
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

	private HttpRequest request(String path, String key, String body) {
		return request(path, key, body, null);
	}

	private HttpRequest request(String path, String key, String body, String user) {
		HttpRequest.Builder builder = HttpRequest.newBuilder(uri(path))
			.timeout(Duration.ofSeconds(20))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString(body));
		if (user != null) {
			builder.header("Authorization", "Basic "
					+ Base64.getEncoder().encodeToString((user + ":" + user).getBytes(StandardCharsets.UTF_8)));
		}
		return builder.build();
	}

	private HttpRequest tenantRequest(String key, String body, String tenant) {
		return HttpRequest.newBuilder(uri("/tenant-payments"))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.header("X-Tenant", tenant)
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build();
	}

	private URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

	private static String newKey() {
		return UUID.randomUUID().toString();
	}

}
