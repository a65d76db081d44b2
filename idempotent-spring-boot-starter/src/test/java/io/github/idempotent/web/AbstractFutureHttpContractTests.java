package io.github.idempotent.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.idempotent.web.WebTestApplication.Executions;
import io.github.idempotent.web.WebTestApplication.Gate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP contract of Spring MVC controllers that return a {@code CompletableFuture} or
 * {@code CompletionStage}, over real HTTP; one subclass per store.
 */
@ExtendWith(OutputCaptureExtension.class)
abstract class AbstractFutureHttpContractTests {

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
		this.gate.reset();
	}

	@Test
	void firstCallStoresTheFuturesValueAndAReplayReturnsItWithoutRunning() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"F-1\",\"amount\":250}";
		HttpResponse<String> first = post("/future-payments", key, body);
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(first.headers().firstValue("Idempotency-Key")).hasValue(key);
		assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(first.body()).contains("\"id\":\"fpay-1-F-1\"");
		HttpResponse<String> replay = post("/future-payments", key, body);
		assertThat(replay.statusCode()).isEqualTo(201);
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
		assertThat(replay.headers().firstValue("X-Payment-Id")).isEqualTo(first.headers().firstValue("X-Payment-Id"));
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replay.headers().firstValue("Idempotency-Key")).hasValue(key);
		assertThat(this.executions.count("future-payments")).isEqualTo(1);
	}

	/**
	 * The key echo and the replay marker of a future or a {@code Mono} on Spring MVC,
	 * claimed before the handler is called or, scoped by an argument, when it is called.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "/future-payments", "/future-tenant-payments", "/mono-payments", "/mono-tenant-payments" })
	void anAsyncCallEchoesTheKeyAndItsReplayIsMarked(String path) throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"F-7\",\"amount\":7}";
		HttpResponse<String> first = send(tenantRequest(path, key, body));
		assertThat(first.statusCode()).isIn(200, 201);
		assertThat(first.headers().firstValue("Idempotency-Key")).hasValue(key);
		assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
		HttpResponse<String> replay = send(tenantRequest(path, key, body));
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue("Idempotency-Key")).hasValue(key);
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		HttpResponse<String> reused = send(tenantRequest(path, key, "{\"orderNo\":\"F-7\",\"amount\":8}"));
		assertThat(reused.statusCode()).isEqualTo(422);
		AbstractHttpContractTests.assertNotMarked(reused);
	}

	@Test
	void aFailedMonoIsNeitherEchoedNorMarked() throws Exception {
		String key = newKey();
		HttpResponse<String> first = post("/mono-declining-payments", key, "{\"orderNo\":\"F-8\",\"amount\":5}");
		assertThat(first.statusCode()).isEqualTo(402);
		AbstractHttpContractTests.assertNotMarked(first);
		assertThat(this.executions.count("mono-declining")).isEqualTo(1);
	}

	@Test
	void aCompletedCallEndsItsHoldOnceSoThatNoFailureOrLostLeaseIsReported(CapturedOutput output) throws Exception {
		String key = newKey();
		HttpResponse<String> first = post("/future-payments", key, "{\"orderNo\":\"F-5\",\"amount\":7}");
		assertThat(first.statusCode()).isEqualTo(201);
		// The container ends the async request after the response has gone out.
		Awaitility.await()
			.during(Duration.ofMillis(800))
			.atMost(Duration.ofSeconds(3))
			.untilAsserted(() -> assertThat(output.getAll()).doesNotContain("'" + key + "'"));
	}

	@Test
	void duplicateWhileTheFutureIsPendingIsConflictWithRetryAfter() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"F-2\",\"amount\":5}";
		CompletableFuture<HttpResponse<String>> first = this.http
			.sendAsync(request("/future-gated-payments", key, body), HttpResponse.BodyHandlers.ofString());
		assertThat(this.gate.awaitEntered()).isTrue();
		HttpResponse<String> duplicate = post("/future-gated-payments", key, body);
		assertThat(duplicate.statusCode()).isEqualTo(409);
		assertThat(duplicate.headers().firstValue("Retry-After")).isPresent();
		assertThat(duplicate.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		AbstractHttpContractTests.assertNotMarked(duplicate);
		this.gate.open();
		HttpResponse<String> completed = first.get(20, TimeUnit.SECONDS);
		assertThat(completed.statusCode()).isEqualTo(200);
		HttpResponse<String> replay = post("/future-gated-payments", key, body);
		assertThat(replay.body()).isEqualTo(completed.body());
		assertThat(this.executions.count("future-gated")).isEqualTo(1);
	}

	@Test
	void exceptionalCompletionReleasesTheKeySoARetryRunsAgain() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"F-3\",\"amount\":5}";
		HttpResponse<String> first = post("/future-declining-payments", key, body);
		assertThat(first.statusCode()).isEqualTo(402);
		AbstractHttpContractTests.assertNotMarked(first);
		HttpResponse<String> retry = post("/future-declining-payments", key, body);
		assertThat(retry.statusCode()).isEqualTo(402);
		AbstractHttpContractTests.assertNotMarked(retry);
		assertThat(this.executions.count("future-declining")).isEqualTo(2);
	}

	@Test
	void exceptionalCompletionListedInCacheForIsReplayed() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"F-4\",\"amount\":5}";
		HttpResponse<String> first = post("/future-cached-declines", key, body);
		HttpResponse<String> retry = post("/future-cached-declines", key, body);
		assertThat(first.statusCode()).isEqualTo(402);
		assertThat(retry.statusCode()).isEqualTo(402);
		assertThat(retry.body()).isEqualTo(first.body()).contains("Card declined (1)");
		assertThat(retry.headers().firstValue("Idempotency-Key")).hasValue(key);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.executions.count("future-cached")).isEqualTo(1);
	}

	@Test
	void keyReusedWithAnotherPayloadIsUnprocessableAndMissingKeyIsBadRequest() throws Exception {
		String key = newKey();
		assertThat(post("/future-payments", key, "{\"orderNo\":\"F-5\",\"amount\":1}").statusCode()).isEqualTo(201);
		HttpResponse<String> reused = post("/future-payments", key, "{\"orderNo\":\"F-5\",\"amount\":2}");
		assertThat(reused.statusCode()).isEqualTo(422);
		assertThat(reused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		AbstractHttpContractTests.assertNotMarked(reused);
		HttpResponse<String> missing = this.http.send(HttpRequest.newBuilder(uri("/future-payments"))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"orderNo\":\"F-5\",\"amount\":1}"))
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(missing.statusCode()).isEqualTo(400);
		assertThat(this.executions.count("future-payments")).isEqualTo(1);
	}

	@Test
	void stormOfConcurrentIdenticalRequestsRunsTheMethodOnce() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"F-6\",\"amount\":64}";
		List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
		for (int i = 0; i < 64; i++) {
			responses
				.add(this.http.sendAsync(request("/future-payments", key, body), HttpResponse.BodyHandlers.ofString()));
		}
		List<String> created = new ArrayList<>();
		int conflicts = 0;
		for (CompletableFuture<HttpResponse<String>> response : responses) {
			HttpResponse<String> answer = response.get(30, TimeUnit.SECONDS);
			assertThat(answer.statusCode()).isIn(201, 409);
			if (answer.statusCode() == 201) {
				created.add(answer.body());
			}
			else {
				conflicts++;
			}
		}
		assertThat(created).isNotEmpty().allMatch(created.get(0)::equals);
		assertThat(created.size() + conflicts).isEqualTo(64);
		assertThat(this.executions.count("future-payments")).isEqualTo(1);
		assertThat(post("/future-payments", key, body).body()).isEqualTo(created.get(0));
	}

	private HttpResponse<String> send(HttpRequest request) throws Exception {
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

	private HttpRequest tenantRequest(String path, String key, String body) {
		return HttpRequest.newBuilder(uri(path))
			.timeout(Duration.ofSeconds(30))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.header("X-Tenant", "acme")
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build();
	}

	HttpResponse<String> post(String path, String key, String body) throws Exception {
		return this.http.send(request(path, key, body), HttpResponse.BodyHandlers.ofString());
	}

	private HttpRequest request(String path, String key, String body) {
		return HttpRequest.newBuilder(uri(path))
			.timeout(Duration.ofSeconds(30))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build();
	}

	private URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

	static String newKey() {
		return UUID.randomUUID().toString();
	}

}
