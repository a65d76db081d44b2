package io.github.idempotent.web;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every WebFlux handler scopes its keys to the caller, whatever it returns: a
 * {@code CompletableFuture} or a plain value is called on a thread that carries no
 * security context, and must still take its caller from the request's reactive one. Users
 * alice and bob of {@link WebFluxTestApplication} send the same key and body over HTTP
 * Basic; each gets a response of their own, and a retry of one is a marked replay.
 */
@SpringBootTest(classes = WebFluxTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "idempotent.store.type=redis" })
@Import(WebFluxPrincipalScopeTests.StatementsController.class)
class WebFluxPrincipalScopeTests {

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
	}

	static final AtomicInteger runs = new AtomicInteger();

	@LocalServerPort
	private int port;

	private WebTestClient client;

	@BeforeEach
	void client() {
		this.client = WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:" + this.port)
			.responseTimeout(Duration.ofSeconds(30))
			.build();
	}

	@ParameterizedTest
	@ValueSource(strings = { "/scoped/future-statements", "/scoped/plain-statements", "/scoped/bodiless-statements",
			"/scoped/keyed-mono-statements" })
	void twoUsersWithOneKeyEachGetTheirOwnResponse(String path) {
		String key = UUID.randomUUID().toString();
		int before = runs.get();
		EntityExchangeResult<String> alice = post(path, "alice", key);
		EntityExchangeResult<String> bob = post(path, "bob", key);
		assertThat(alice.getStatus().value()).isEqualTo(200);
		assertThat(bob.getStatus().value()).isEqualTo(200);
		assertThat(bob.getResponseBody()).isNotEqualTo(alice.getResponseBody());
		assertThat(bob.getResponseHeaders().getFirst("Idempotent-Replayed")).isNull();
		assertThat(runs.get() - before).isEqualTo(2);
	}

	@ParameterizedTest
	@ValueSource(strings = { "/scoped/future-statements", "/scoped/plain-statements", "/scoped/bodiless-statements" })
	void aUsersRetryIsAMarkedReplayOfTheirOwnResponse(String path) {
		String key = UUID.randomUUID().toString();
		int before = runs.get();
		EntityExchangeResult<String> first = post(path, "alice", key);
		EntityExchangeResult<String> retry = post(path, "alice", key);
		assertThat(retry.getStatus().value()).isEqualTo(200);
		assertThat(retry.getResponseBody()).isEqualTo(first.getResponseBody());
		assertThat(retry.getResponseHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
		assertThat(retry.getResponseHeaders().getFirst("Idempotency-Key")).isEqualTo(key);
		assertThat(runs.get() - before).isEqualTo(1);
	}

	@ParameterizedTest
	@ValueSource(strings = { "/scoped/future-statements", "/scoped/plain-statements" })
	void anonymousCallersShareTheAnonymousScope(String path) {
		String key = UUID.randomUUID().toString();
		int before = runs.get();
		EntityExchangeResult<String> first = post(path, null, key);
		EntityExchangeResult<String> second = post(path, null, key);
		assertThat(second.getResponseBody()).isEqualTo(first.getResponseBody());
		assertThat(second.getResponseHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
		assertThat(runs.get() - before).isEqualTo(1);
	}

	private EntityExchangeResult<String> post(String path, String user, String key) {
		return this.client.post().uri(path).headers((headers) -> {
			if (user != null) {
				headers.setBasicAuth(user, user);
			}
			headers.set("Idempotency-Key", key);
		})
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"month\":\"2026-11\"}")
			.exchange()
			.expectBody(String.class)
			.returnResult();
	}

	record StatementRequest(String month) {
	}

	record Statement(String text) {
	}

	@RestController
	static class StatementsController {

		@PostMapping("/scoped/future-statements")
		@Idempotent
		CompletableFuture<Statement> future(@RequestBody StatementRequest request) {
			return CompletableFuture.completedFuture(statement(request.month()));
		}

		@PostMapping("/scoped/plain-statements")
		@Idempotent
		Statement plain(@RequestBody StatementRequest request) {
			return statement(request.month());
		}

		@PostMapping("/scoped/keyed-mono-statements")
		@Idempotent(key = "#key")
		Mono<Statement> keyedMono(@RequestHeader("Idempotency-Key") String key, @RequestBody StatementRequest request) {
			return Mono.fromSupplier(() -> statement(request.month()));
		}

		@PostMapping("/scoped/bodiless-statements")
		@Idempotent
		Statement bodiless() {
			return statement("current");
		}

		private static Statement statement(String month) {
			return new Statement("statement #" + runs.incrementAndGet() + " for " + month);
		}

	}

}
