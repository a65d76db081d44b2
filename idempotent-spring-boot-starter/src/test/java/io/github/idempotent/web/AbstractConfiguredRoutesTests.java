package io.github.idempotent.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;

import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Handlers without {@code @Idempotent} guarded by {@code idempotent.web.routes}: the same
 * contract as the annotation, for users alice and bob over HTTP Basic against a real
 * Redis. One subclass per web stack, each serving {@link Controllers}.
 */
@TestPropertySource(properties = { "idempotent.store.type=redis", "idempotent.web.routes[0].paths=/api/**",
		"idempotent.web.routes[0].exclude-paths=/api/health/**", "idempotent.web.routes[0].methods=POST, PUT, PATCH",
		"idempotent.web.routes[0].wait-for=0s", "idempotent.web.routes[0].retry-after=7s",
		"idempotent.web.routes[1].paths=/strict/**", "idempotent.web.routes[1].required=true" })
abstract class AbstractConfiguredRoutesTests {

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
	}

	/** Every run of a handler, as "handler:user": kept outside the store. */
	static final List<String> ledger = new CopyOnWriteArrayList<>();

	static final Gate gate = new Gate();

	private static final AtomicInteger runs = new AtomicInteger();

	@LocalServerPort
	private int port;

	@Autowired
	private IdempotencyExecutor executor;

	private final HttpClient http = HttpClient.newHttpClient();

	@BeforeEach
	void clear() {
		ledger.clear();
	}

	@Test
	void concurrentDuplicatesRunTheHandlerOnceAndRetriesReplayIt() throws Exception {
		String key = UUID.randomUUID().toString();
		String body = "{\"amount\":10}";
		List<CompletableFuture<HttpResponse<String>>> storm = new ArrayList<>();
		for (int i = 0; i < 16; i++) {
			storm.add(this.http.sendAsync(request("POST", "/api/payments", "alice", key, body),
					HttpResponse.BodyHandlers.ofString()));
		}
		List<HttpResponse<String>> responses = new ArrayList<>();
		for (CompletableFuture<HttpResponse<String>> response : storm) {
			responses.add(response.get(30, TimeUnit.SECONDS));
		}
		assertThat(ledger).containsExactly("pay:alice");
		assertThat(responses).extracting(HttpResponse::statusCode).isSubsetOf(200, 409);
		HttpResponse<String> first = responses.stream()
			.filter((response) -> response.statusCode() == 200
					&& response.headers().firstValue("Idempotent-Replayed").isEmpty())
			.findFirst()
			.orElseThrow();
		HttpResponse<String> retry = send("POST", "/api/payments", "alice", key, body);
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(ledger).containsExactly("pay:alice");
	}

	@Test
	void sameKeyWithAnotherBodyIsUnprocessable() throws Exception {
		String key = UUID.randomUUID().toString();
		send("POST", "/api/payments", "alice", key, "{\"amount\":10}");
		HttpResponse<String> reused = send("POST", "/api/payments", "alice", key, "{\"amount\":99}");
		assertThat(reused.statusCode()).isEqualTo(422);
		assertThat(reused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(ledger).containsExactly("pay:alice");
	}

	@Test
	void aDuplicateWhileTheFirstRunsIsConflictWithTheRoutesRetryAfter() throws Exception {
		String key = UUID.randomUUID().toString();
		gate.reset();
		CompletableFuture<HttpResponse<String>> first = this.http
			.sendAsync(request("POST", "/api/gated", "alice", key, "{}"), HttpResponse.BodyHandlers.ofString());
		assertThat(gate.awaitEntered()).isTrue();
		HttpResponse<String> duplicate = send("POST", "/api/gated", "alice", key, "{}");
		gate.open();
		assertThat(duplicate.statusCode()).isEqualTo(409);
		assertThat(duplicate.headers().firstValue("Retry-After")).hasValue("7");
		assertThat(duplicate.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		assertThat(ledger).containsExactly("gated:alice");
	}

	@Test
	void aliceAndBobWithOneKeyEachGetTheirOwnResult() throws Exception {
		String key = UUID.randomUUID().toString();
		String body = "{\"amount\":10}";
		HttpResponse<String> alice = send("POST", "/api/payments", "alice", key, body);
		HttpResponse<String> bob = send("POST", "/api/payments", "bob", key, body);
		assertThat(alice.body()).contains("\"ranFor\":\"alice\"");
		assertThat(bob.body()).contains("\"ranFor\":\"bob\"");
		assertThat(bob.headers().firstValue("Idempotent-Replayed")).isEmpty();
		HttpResponse<String> bobRetry = send("POST", "/api/payments", "bob", key, body);
		assertThat(bobRetry.body()).isEqualTo(bob.body());
		assertThat(bobRetry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(ledger).containsExactly("pay:alice", "pay:bob");
	}

	@Test
	void theRecordsAreTheHandlerMethodsAsTheAnnotationWouldNameThem() throws Exception {
		send("POST", "/api/payments", "alice", UUID.randomUUID().toString(), "{\"amount\":1}");
		assertThat(this.executor.operationNames())
			.contains(Controllers.class.getName() + "#pay(java.util.Map,java.security.Principal)");
	}

	@Test
	void anExcludedPathIsNotGuarded() throws Exception {
		String key = UUID.randomUUID().toString();
		send("POST", "/api/health/ping", "alice", key, "{}");
		HttpResponse<String> again = send("POST", "/api/health/ping", "alice", key, "{}");
		assertThat(again.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(ledger).containsExactly("ping:alice", "ping:alice");
	}

	@Test
	void aMethodTheRouteDoesNotListIsNotGuarded() throws Exception {
		String key = UUID.randomUUID().toString();
		send("GET", "/api/balance", "alice", key, null);
		HttpResponse<String> again = send("GET", "/api/balance", "alice", key, null);
		assertThat(again.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(ledger).containsExactly("balance:alice", "balance:alice");
	}

	@Test
	void withoutAKeyARouteRunsUnguardedUnlessItRequiresOne() throws Exception {
		send("POST", "/api/payments", "alice", null, "{\"amount\":1}");
		send("POST", "/api/payments", "alice", null, "{\"amount\":1}");
		assertThat(ledger).containsExactly("pay:alice", "pay:alice");
		HttpResponse<String> strict = send("POST", "/strict/orders", "alice", null, "{}");
		assertThat(strict.statusCode()).isEqualTo(400);
		assertThat(strict.body()).contains("urn:idempotent:");
		assertThat(ledger).containsExactly("pay:alice", "pay:alice");
	}

	@Test
	void aHandlersOwnAnnotationWinsOverTheRoute() throws Exception {
		HttpResponse<String> keyless = send("POST", "/api/annotated", "alice", null, "{}");
		assertThat(keyless.statusCode()).isEqualTo(400);
		String key = UUID.randomUUID().toString();
		gate.reset();
		CompletableFuture<HttpResponse<String>> first = this.http
			.sendAsync(request("POST", "/api/annotated", "alice", key, "{}"), HttpResponse.BodyHandlers.ofString());
		assertThat(gate.awaitEntered()).isTrue();
		HttpResponse<String> duplicate = send("POST", "/api/annotated", "alice", key, "{}");
		gate.open();
		assertThat(duplicate.statusCode()).isEqualTo(409);
		assertThat(duplicate.headers().firstValue("Retry-After")).hasValue("3");
		assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		assertThat(ledger).containsExactly("annotated:alice");
	}

	@Test
	void aStreamingHandlerARouteMatchesFailsRatherThanRunUnguarded() throws Exception {
		HttpResponse<String> stream = send("POST", "/api/stream", "alice", UUID.randomUUID().toString(), "{}");
		assertThat(stream.statusCode()).isEqualTo(500);
		assertThat(stream.body()).doesNotContain("Exception");
		assertThat(ledger).isEmpty();
	}

	private HttpResponse<String> send(String method, String path, String user, @Nullable String key,
			@Nullable String body) throws Exception {
		return this.http.send(request(method, path, user, key, body), HttpResponse.BodyHandlers.ofString());
	}

	private HttpRequest request(String method, String path, String user, @Nullable String key, @Nullable String body) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(20))
			.header("Authorization",
					"Basic " + Base64.getEncoder().encodeToString((user + ":" + user).getBytes(StandardCharsets.UTF_8)))
			.header("Content-Type", "application/json")
			.method(method,
					(body != null) ? HttpRequest.BodyPublishers.ofString(body) : HttpRequest.BodyPublishers.noBody());
		if (key != null) {
			request.header("Idempotency-Key", key);
		}
		return request.build();
	}

	/**
	 * A run of a handler, in the ledger, and what it answers.
	 */
	static Map<String, Object> ran(String handler, String user, @Nullable Object amount) {
		ledger.add(handler + ":" + user);
		return Map.of("ranFor", user, "amount", String.valueOf(amount), "run", runs.incrementAndGet());
	}

	/**
	 * The handlers, none annotated but one: the routes guard them.
	 */
	@RestController
	static class Controllers {

		@PostMapping("/api/payments")
		Map<String, Object> pay(@RequestBody Map<String, Object> request, Principal principal) {
			return ran("pay", principal.getName(), request.get("amount"));
		}

		@PostMapping("/api/gated")
		Mono<Map<String, Object>> gated(Principal principal) {
			return Mono.fromFuture(gate.enter()).then(Mono.fromSupplier(() -> ran("gated", principal.getName(), null)));
		}

		@PostMapping("/api/stream")
		Flux<String> stream(Principal principal) {
			return Flux.defer(() -> Flux.just(ran("stream", principal.getName(), null).toString()));
		}

		@PostMapping("/api/health/ping")
		Map<String, Object> ping(Principal principal) {
			return ran("ping", principal.getName(), null);
		}

		@GetMapping("/api/balance")
		Map<String, Object> balance(Principal principal) {
			return ran("balance", principal.getName(), null);
		}

		@PostMapping("/strict/orders")
		Map<String, Object> order(Principal principal) {
			return ran("order", principal.getName(), null);
		}

		/**
		 * The route would let a request without a key run, and answer a duplicate in
		 * progress with Retry-After 7.
		 */
		@PostMapping("/api/annotated")
		@Idempotent(retryAfter = "3s", waitFor = "0s")
		Mono<Map<String, Object>> annotated(Principal principal) {
			return Mono.fromFuture(gate.enter())
				.then(Mono.fromSupplier(() -> ran("annotated", principal.getName(), null)));
		}

	}

	/**
	 * Holds a handler inside its call until the test opens the gate.
	 */
	static final class Gate {

		private volatile CountDownLatch entered = new CountDownLatch(1);

		private volatile CompletableFuture<Void> open = new CompletableFuture<>();

		void reset() {
			this.entered = new CountDownLatch(1);
			this.open = new CompletableFuture<>();
		}

		boolean awaitEntered() throws InterruptedException {
			return this.entered.await(20, TimeUnit.SECONDS);
		}

		void open() {
			this.open.complete(null);
		}

		/**
		 * Entered; completes when the gate opens.
		 */
		CompletableFuture<Void> enter() {
			this.entered.countDown();
			return this.open;
		}

	}

}
