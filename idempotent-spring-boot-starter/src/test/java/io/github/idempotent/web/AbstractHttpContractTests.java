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
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP contract, one test per row of the table in docs/http.md, over real HTTP: each
 * case written once and run on both stacks, Spring MVC ({@link HttpContractTests}) and
 * WebFlux ({@link AbstractWebFluxHttpContractTests}, one subclass per store), against the
 * same payments API, which both test applications serve ({@code /payments},
 * {@code /orders}, {@code /declining-payments}, ...), and an endpoint held in its method
 * until the test opens a gate, which each stack's class names. A stack's class adds the
 * cases only its stack has.
 */
abstract class AbstractHttpContractTests {

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@LocalServerPort
	private int port;

	/**
	 * How often the application ran the method that counts under this name.
	 */
	protected abstract int runs(String counter);

	/**
	 * The endpoint held in its method from {@link #closeGate()} to {@link #openGate()},
	 * counting its runs under {@link #gatedCounter()} and answering 200 with a payment
	 * whose id is that name and the run's number.
	 */
	protected abstract String gatedPath();

	protected abstract String gatedCounter();

	protected abstract void closeGate();

	/**
	 * Waits until a call of {@link #gatedPath()} has entered its method: its key is
	 * claimed.
	 */
	protected abstract void awaitGateEntered() throws InterruptedException;

	protected abstract void openGate();

	@Test
	void illegalStateTransitionIsConflictWithoutRetryAfter() throws Exception {
		HttpResponse<String> response = post("/refunds", newKey(), "{\"orderNo\":\"R-1\",\"amount\":1}");
		assertThat(response.statusCode()).isEqualTo(409);
		assertThat(response.headers().firstValue("Retry-After")).isEmpty();
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(response.body()).contains("\"currentState\":\"CREATED\"").contains("\"targetState\":\"REFUNDED\"");
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
		assertThat(runs("payments")).isEqualTo(1);
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
		assertThat(runs("payments")).isEqualTo(1);
	}

	@Test
	void duplicateWhileInProgressIsConflictWithRetryAfter() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"S-1\",\"amount\":5}";
		closeGate();
		CompletableFuture<HttpResponse<String>> first = this.http.sendAsync(request(gatedPath(), key, body),
				HttpResponse.BodyHandlers.ofString());
		// The method is running, so the key is claimed; it stays in progress until the
		// gate opens.
		awaitGateEntered();
		HttpResponse<String> duplicate = post(gatedPath(), key, body);
		openGate();
		assertThat(duplicate.statusCode()).isEqualTo(409);
		assertThat(duplicate.headers().firstValue("Retry-After")).hasValue("2");
		assertThat(duplicate.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(duplicate.body()).contains("\"status\":409").contains("\"idempotencyKey\":\"" + key + "\"");
		assertNotMarked(duplicate);
		assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		assertThat(runs(gatedCounter())).isEqualTo(1);
	}

	/**
	 * The client gives up while the method runs, the usual prelude to a retry: the method
	 * goes on, and its outcome is stored once it returns, although nothing writes the
	 * response any more. The retry gets it, and the key is not held until maxDuration.
	 */
	@Test
	void aClientThatGoesAwayWhileTheMethodRunsFindsItsResultOnRetry() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"W-9\",\"amount\":5}";
		closeGate();
		HttpRequest gone = HttpRequest.newBuilder(uri(gatedPath()))
			.timeout(Duration.ofMillis(300))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build();
		assertThat(this.http.sendAsync(gone, HttpResponse.BodyHandlers.discarding()))
			.failsWithin(Duration.ofSeconds(10));
		awaitGateEntered();
		// The server has seen the connection close before the method returns.
		Thread.sleep(300);
		openGate();
		HttpResponse<String> retry = null;
		for (int i = 0; i < 50; i++) {
			retry = post(gatedPath(), key, body);
			if (retry.statusCode() != 409) {
				break;
			}
			Thread.sleep(100);
		}
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).contains("\"id\":\"" + gatedCounter() + "-1\"");
		assertThat(runs(gatedCounter())).isEqualTo(1);
	}

	@Test
	void sameKeyWithAnotherPayloadIsUnprocessable() throws Exception {
		String key = newKey();
		post("/payments", key, "{\"orderNo\":\"A-3\",\"amount\":250}");
		HttpResponse<String> reused = post("/payments", key, "{\"orderNo\":\"A-3\",\"amount\":999}");
		assertThat(reused.statusCode()).isEqualTo(422);
		assertThat(reused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(reused.body()).contains("\"idempotencyKey\":\"" + key + "\"");
		assertNotMarked(reused);
		assertThat(runs("payments")).isEqualTo(1);
	}

	@Test
	void payloadsThatDifferOnlyInPropertyOrderAreTheSamePayload() throws Exception {
		String key = newKey();
		HttpResponse<String> first = post("/payments", key, "{\"orderNo\":\"A-4\",\"amount\":250}");
		HttpResponse<String> second = post("/payments", key, "{\"amount\":250,\"orderNo\":\"A-4\"}");
		assertThat(second.statusCode()).isEqualTo(201);
		assertThat(second.body()).isEqualTo(first.body());
		assertThat(runs("payments")).isEqualTo(1);
	}

	@Test
	void missingKeyIsBadRequest() throws Exception {
		HttpResponse<String> response = send(HttpRequest.newBuilder(uri("/payments"))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"orderNo\":\"A-5\",\"amount\":1}"))
			.build());
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(response.body()).contains("Idempotency-Key");
		assertThat(runs("payments")).isZero();
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
		assertThat(quotedTooLong.body()).contains("256 characters");
		assertThat(runs("payments")).isZero();
	}

	@Test
	void quotedAndBareKeysAreTheSameKey() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"A-7\",\"amount\":1}";
		HttpResponse<String> first = post("/payments", key, body);
		HttpResponse<String> quoted = post("/payments", "\"" + key + "\"", body);
		assertThat(quoted.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(quoted.body()).isEqualTo(first.body());
		assertThat(runs("payments")).isEqualTo(1);
	}

	/**
	 * The application's own exception handling answers, and the key is released: a retry
	 * runs the method again rather than replay the error.
	 */
	@Test
	void anErrorKeepsTheApplicationsHandlingAndReleasesTheKey() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"D-1\",\"amount\":1}";
		HttpResponse<String> first = post("/declining-payments", key, body);
		assertThat(first.statusCode()).isEqualTo(402);
		assertThat(first.body()).contains("Card declined for order D-1");
		assertNotMarked(first);
		HttpResponse<String> retry = post("/declining-payments", key, body);
		assertThat(retry.statusCode()).isEqualTo(402);
		assertNotMarked(retry);
		assertThat(runs("declining")).isEqualTo(2);
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
		assertThat(runs("payments")).isEqualTo(2);
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
		assertThat(runs("orders")).isEqualTo(1);
	}

	@Test
	void optionalKeyRunsUnprotectedWithoutAKey() throws Exception {
		for (int i = 0; i < 2; i++) {
			HttpResponse<String> response = send(HttpRequest.newBuilder(uri("/optional-payments"))
				.header("Content-Type", "application/json")
				.POST(HttpRequest.BodyPublishers.ofString("{\"orderNo\":\"P-1\",\"amount\":1}"))
				.build());
			assertThat(response.statusCode()).isEqualTo(200);
		}
		assertThat(runs("optional")).isEqualTo(2);
		String key = newKey();
		post("/optional-payments", key, "{\"orderNo\":\"P-1\",\"amount\":1}");
		post("/optional-payments", key, "{\"orderNo\":\"P-1\",\"amount\":1}");
		assertThat(runs("optional")).isEqualTo(3);
	}

	@Test
	void keyFromASpelExpressionOverTheHeaderArgument() throws Exception {
		String key = newKey();
		HttpResponse<String> first = post("/spel-payments", key, "{\"orderNo\":\"E-1\",\"amount\":1}");
		HttpResponse<String> replay = post("/spel-payments", key, "{\"orderNo\":\"E-1\",\"amount\":1}");
		assertThat(replay.body()).isEqualTo(first.body());
		// The request sent the key: echoed, although an expression names it.
		assertThat(first.headers().firstValue("Idempotency-Key")).hasValue(key);
		assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(replay.headers().firstValue("Idempotency-Key")).hasValue(key);
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(runs("spel")).isEqualTo(1);
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
		// Claimed when the handler is called: its scope comes from an argument.
		assertThat(acme.headers().firstValue("Idempotency-Key")).hasValue(key);
		assertThat(acme.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(acmeAgain.headers().firstValue("Idempotency-Key")).hasValue(key);
		assertThat(acmeAgain.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(runs("tenant")).isEqualTo(2);
	}

	@Test
	void anErrorListedInCacheForIsReplayed() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"W-7\",\"amount\":5}";
		HttpResponse<String> first = post("/cached-declines", key, body);
		HttpResponse<String> retry = post("/cached-declines", key, body);
		assertThat(first.statusCode()).isEqualTo(402);
		assertThat(retry.statusCode()).isEqualTo(402);
		assertThat(retry.body()).isEqualTo(first.body()).contains("Card declined (1)");
		assertThat(retry.headers().firstValue("Idempotency-Key")).hasValue(key);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(runs("cached")).isEqualTo(1);
	}

	@Test
	void anEmptyResultReplaysAsEmpty() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"W-8\",\"amount\":5}";
		HttpResponse<String> first = post("/empty-payments", key, body);
		HttpResponse<String> replay = post("/empty-payments", key, body);
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(replay.statusCode()).isEqualTo(200);
		assertThat(replay.body()).isEmpty();
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(runs("empty")).isEqualTo(1);
	}

	/**
	 * With {@code waitFor}, every duplicate of a storm waits for the first and gets its
	 * result.
	 */
	@Test
	void stormOf64ConcurrentIdenticalRequestsRunsTheMethodOnce() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"W-10\",\"amount\":64}";
		List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
		for (int i = 0; i < 64; i++) {
			responses.add(sendAsync(request("/storm-payments", key, body)));
		}
		List<String> bodies = new ArrayList<>();
		int replayed = 0;
		for (CompletableFuture<HttpResponse<String>> response : responses) {
			HttpResponse<String> result = response.get(60, TimeUnit.SECONDS);
			assertThat(result.statusCode()).isEqualTo(200);
			bodies.add(result.body());
			if (result.headers().firstValue("Idempotent-Replayed").filter("true"::equals).isPresent()) {
				replayed++;
			}
		}
		assertThat(bodies).hasSize(64).allMatch(bodies.get(0)::equals);
		assertThat(replayed).isEqualTo(63);
		assertThat(runs("storm")).isEqualTo(1);
	}

	// Neither the key echo nor the replay marker: the call was refused or failed.
	protected static void assertNotMarked(HttpResponse<?> response) {
		assertThat(response.headers().firstValue("Idempotency-Key")).isEmpty();
		assertThat(response.headers().firstValue("Idempotent-Replayed")).isEmpty();
	}

	protected HttpResponse<String> post(String path, String key, String body) throws Exception {
		return send(request(path, key, body));
	}

	protected HttpResponse<String> send(HttpRequest request) throws Exception {
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

	protected CompletableFuture<HttpResponse<String>> sendAsync(HttpRequest request) {
		return this.http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
	}

	protected HttpRequest request(String path, String key, String body) {
		return request(path, key, body, null);
	}

	private HttpRequest request(String path, String key, String body, String user) {
		HttpRequest.Builder builder = HttpRequest.newBuilder(uri(path))
			.timeout(Duration.ofSeconds(30))
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

	protected URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

	protected static String newKey() {
		return UUID.randomUUID().toString();
	}

}
