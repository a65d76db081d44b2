package io.github.idempotent.web;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.web.WebFluxTestApplication.Executions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP contract on WebFlux, the same table as on Spring MVC, over real HTTP against a
 * Netty server; one subclass per store. After every test, no blocking store call has run
 * on a thread that must not block.
 */
abstract class AbstractWebFluxHttpContractTests {

	@LocalServerPort
	private int port;

	@Autowired
	private Executions executions;

	@Autowired
	private IdempotencyStore store;

	private WebTestClient client;

	@BeforeEach
	void reset() {
		this.executions.reset();
		WebFluxTestApplication.blockingCallsOnNonBlockingThreads.clear();
		this.client = WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:" + this.port)
			.responseTimeout(Duration.ofSeconds(30))
			.build();
	}

	@AfterEach
	void noBlockingStoreCallOnANonBlockingThread() {
		assertThat(WebFluxTestApplication.blockingCallsOnNonBlockingThreads).isEmpty();
	}

	@Test
	void theCheckRecordsABlockingStoreCallOnANonBlockingThread() {
		RecordKey key = RecordKey.of("blocking-check:", "", "check", UUID.randomUUID().toString(), 512);
		Mono.fromCallable(() -> this.store.claim(key, new Fingerprint("none"), Duration.ofSeconds(5)))
			.subscribeOn(Schedulers.parallel())
			.block(Duration.ofSeconds(10));
		assertThat(WebFluxTestApplication.blockingCallsOnNonBlockingThreads)
			.anySatisfy((call) -> assertThat(call).startsWith("store claim on parallel-"));
		WebFluxTestApplication.blockingCallsOnNonBlockingThreads.clear();
	}

	@Test
	void firstCallRunsTheMethodAndEchoesTheKey() {
		String key = newKey();
		EntityExchangeResult<String> first = post("/payments", key, "{\"orderNo\":\"W-1\",\"amount\":250}");
		assertThat(first.getStatus().value()).isEqualTo(201);
		assertThat(first.getResponseHeaders().getFirst("Idempotency-Key")).isEqualTo(key);
		assertThat(first.getResponseHeaders().getFirst("Idempotent-Replayed")).isNull();
		assertThat(first.getResponseHeaders().getFirst("Location")).isEqualTo("/payments/pay-1-W-1");
		assertThat(first.getResponseBody()).contains("\"id\":\"pay-1-W-1\"");
		assertThat(this.executions.count("payments")).isEqualTo(1);
	}

	@Test
	void replayReturnsTheOriginalStatusHeadersAndBodyWithoutRunningTheMethod() {
		String key = newKey();
		String body = "{\"orderNo\":\"W-2\",\"amount\":250}";
		EntityExchangeResult<String> first = post("/payments", key, body);
		EntityExchangeResult<String> replay = post("/payments", key, body);
		assertThat(replay.getStatus().value()).isEqualTo(201);
		assertThat(replay.getResponseBody()).isEqualTo(first.getResponseBody());
		HttpHeaders headers = replay.getResponseHeaders();
		assertThat(headers.getFirst("Location")).isEqualTo(first.getResponseHeaders().getFirst("Location"));
		assertThat(headers.getFirst("X-Payment-Id")).isEqualTo(first.getResponseHeaders().getFirst("X-Payment-Id"));
		assertThat(headers.getFirst("Cache-Control")).isEqualTo("no-store");
		assertThat(headers.getFirst("Idempotent-Replayed")).isEqualTo("true");
		assertThat(headers.getFirst("Idempotency-Key")).isEqualTo(key);
		assertThat(this.executions.count("payments")).isEqualTo(1);
	}

	@Test
	void duplicateWhileInProgressIsConflictWithRetryAfter() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"W-3\",\"amount\":5}";
		this.executions.closeGate();
		CompletableFuture<EntityExchangeResult<String>> first = CompletableFuture
			.supplyAsync(() -> post("/slow-payments", key, body));
		// The method has started, so the key is claimed; it stays in progress until the
		// gate opens.
		for (int i = 0; i < 1000 && this.executions.count("slow-started") == 0; i++) {
			Thread.sleep(10);
		}
		EntityExchangeResult<String> duplicate = post("/slow-payments", key, body);
		this.executions.openGate();
		assertThat(duplicate.getStatus().value()).isEqualTo(409);
		assertThat(duplicate.getResponseHeaders().getFirst("Retry-After")).isEqualTo("2");
		assertThat(duplicate.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
		assertThat(duplicate.getResponseBody()).contains("\"status\":409").contains(key);
		assertThat(first.get(30, TimeUnit.SECONDS).getStatus().value()).isEqualTo(200);
		assertThat(this.executions.count("slow")).isEqualTo(1);
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
		this.executions.closeGate();
		java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
		java.net.http.HttpRequest gone = java.net.http.HttpRequest
			.newBuilder(java.net.URI.create("http://127.0.0.1:" + this.port + "/slow-payments"))
			.timeout(Duration.ofMillis(300))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(java.net.http.HttpRequest.BodyPublishers.ofString(body))
			.build();
		assertThat(http.sendAsync(gone, java.net.http.HttpResponse.BodyHandlers.discarding()))
			.failsWithin(Duration.ofSeconds(10));
		assertThat(this.executions.count("slow-started")).isEqualTo(1);
		// The server has seen the connection close before the method returns.
		Thread.sleep(300);
		this.executions.openGate();
		EntityExchangeResult<String> retry = null;
		for (int i = 0; i < 50; i++) {
			retry = post("/slow-payments", key, body);
			if (retry.getStatus().value() != 409) {
				break;
			}
			Thread.sleep(100);
		}
		assertThat(retry.getStatus().value()).isEqualTo(200);
		assertThat(retry.getResponseHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
		assertThat(retry.getResponseBody()).contains("\"id\":\"slow-1\"");
		assertThat(this.executions.count("slow")).isEqualTo(1);
	}

	@Test
	void sameKeyWithAnotherPayloadIsUnprocessable() {
		String key = newKey();
		post("/payments", key, "{\"orderNo\":\"W-4\",\"amount\":1}");
		EntityExchangeResult<String> reused = post("/payments", key, "{\"orderNo\":\"W-4\",\"amount\":2}");
		assertThat(reused.getStatus().value()).isEqualTo(422);
		assertThat(reused.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
		assertThat(reused.getResponseBody()).contains(key);
		assertThat(this.executions.count("payments")).isEqualTo(1);
	}

	@Test
	void missingOrMalformedKeyIsBadRequest() {
		EntityExchangeResult<String> missing = this.client.post()
			.uri("/payments")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"orderNo\":\"W-5\",\"amount\":1}")
			.exchange()
			.expectBody(String.class)
			.returnResult();
		assertThat(missing.getStatus().value()).isEqualTo(400);
		assertThat(missing.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
		assertThat(missing.getResponseBody()).contains("Idempotency-Key");
		EntityExchangeResult<String> malformed = post("/payments", "\"unclosed", "{\"orderNo\":\"W-5\",\"amount\":1}");
		assertThat(malformed.getStatus().value()).isEqualTo(400);
		EntityExchangeResult<String> tooLong = post("/payments", "\"" + "k".repeat(256) + "\"",
				"{\"orderNo\":\"W-5\",\"amount\":1}");
		assertThat(tooLong.getStatus().value()).isEqualTo(400);
		assertThat(tooLong.getResponseBody()).contains("256 characters");
		assertThat(this.executions.count("payments")).isZero();
	}

	@Test
	void anErrorReleasesTheKeySoARetryRunsAgain() {
		String key = newKey();
		String body = "{\"orderNo\":\"W-6\",\"amount\":5}";
		assertThat(post("/declining-payments", key, body).getStatus().value()).isEqualTo(402);
		EntityExchangeResult<String> retry = post("/declining-payments", key, body);
		assertThat(retry.getStatus().value()).isEqualTo(402);
		assertThat(retry.getResponseHeaders().getFirst("Idempotent-Replayed")).isNull();
		assertThat(this.executions.count("declining")).isEqualTo(2);
	}

	@Test
	void anErrorListedInCacheForIsReplayed() {
		String key = newKey();
		String body = "{\"orderNo\":\"W-7\",\"amount\":5}";
		EntityExchangeResult<String> first = post("/cached-declines", key, body);
		EntityExchangeResult<String> retry = post("/cached-declines", key, body);
		assertThat(first.getStatus().value()).isEqualTo(402);
		assertThat(retry.getStatus().value()).isEqualTo(402);
		assertThat(retry.getResponseBody()).isEqualTo(first.getResponseBody()).contains("Card declined (1)");
		assertThat(this.executions.count("cached")).isEqualTo(1);
	}

	@Test
	void anEmptyResultReplaysAsEmpty() {
		String key = newKey();
		String body = "{\"orderNo\":\"W-8\",\"amount\":5}";
		EntityExchangeResult<String> first = post("/empty-payments", key, body);
		EntityExchangeResult<String> replay = post("/empty-payments", key, body);
		assertThat(first.getStatus().value()).isEqualTo(200);
		assertThat(replay.getStatus().value()).isEqualTo(200);
		assertThat(replay.getResponseBody()).isNull();
		assertThat(replay.getResponseHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
		assertThat(this.executions.count("empty")).isEqualTo(1);
	}

	@Test
	void authenticatedUsersWithTheSameKeyGetTheirOwnResults() {
		String key = newKey();
		String body = "{\"orderNo\":\"W-9\",\"amount\":5}";
		EntityExchangeResult<String> alice = post("/payments", key, body, "alice");
		EntityExchangeResult<String> bob = post("/payments", key, body, "bob");
		assertThat(alice.getResponseBody()).contains("\"payer\":\"alice\"");
		assertThat(bob.getResponseBody()).contains("\"payer\":\"bob\"");
		assertThat(bob.getResponseHeaders().getFirst("Idempotent-Replayed")).isNull();
		assertThat(post("/payments", key, body, "alice").getResponseBody()).isEqualTo(alice.getResponseBody());
		assertThat(this.executions.count("payments")).isEqualTo(2);
	}

	@Test
	void stormOf64ConcurrentIdenticalRequestsRunsTheMethodOnce() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"W-10\",\"amount\":64}";
		ExecutorService senders = Executors.newFixedThreadPool(64);
		try {
			List<Future<EntityExchangeResult<String>>> responses = new ArrayList<>();
			for (int i = 0; i < 64; i++) {
				responses.add(senders.submit(() -> post("/storm-payments", key, body)));
			}
			List<String> bodies = new ArrayList<>();
			int replayed = 0;
			for (Future<EntityExchangeResult<String>> response : responses) {
				EntityExchangeResult<String> result = response.get(60, TimeUnit.SECONDS);
				// Every duplicate waits (waitFor) for the first and gets its result.
				assertThat(result.getStatus().value()).isEqualTo(200);
				bodies.add(result.getResponseBody());
				if ("true".equals(result.getResponseHeaders().getFirst("Idempotent-Replayed"))) {
					replayed++;
				}
			}
			assertThat(bodies).hasSize(64).allMatch(bodies.get(0)::equals);
			assertThat(replayed).isEqualTo(63);
			assertThat(this.executions.count("storm")).isEqualTo(1);
		}
		finally {
			senders.shutdownNow();
		}
	}

	EntityExchangeResult<String> post(String path, String key, String body) {
		return post(path, key, body, null);
	}

	EntityExchangeResult<String> post(String path, String key, String body, String user) {
		return this.client.post()
			.uri(path)
			.contentType(MediaType.APPLICATION_JSON)
			.header("Idempotency-Key", key)
			.headers((headers) -> {
				if (user != null) {
					headers.setBasicAuth(user, user);
				}
			})
			.bodyValue(body)
			.exchange()
			.expectBody(String.class)
			.returnResult();
	}

	static String newKey() {
		return UUID.randomUUID().toString();
	}

}
