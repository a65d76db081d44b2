package io.github.idempotent.web;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.ReactiveIdempotencyScopeResolver;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A reactive scope resolver that finds no caller (here: a tenant map that does not know
 * the user, as {@code Mono.justOrEmpty} answers) fails the call loudly, whatever the
 * handler returns: it never answers 200 for a call that did not run.
 */
@SpringBootTest(classes = WebFluxUnknownCallerTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "idempotent.store.type=redis" })
class WebFluxUnknownCallerTests {

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
	}

	static final List<String> ledger = new CopyOnWriteArrayList<>();

	@LocalServerPort
	private int port;

	private WebTestClient client;

	@BeforeEach
	void client() {
		this.client = WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:" + this.port)
			.responseTimeout(Duration.ofSeconds(30))
			.build();
		ledger.clear();
	}

	@ParameterizedTest
	@ValueSource(strings = { "/tenant/mono", "/tenant/future", "/tenant/plain", "/tenant/entity" })
	void aCallerTheResolverDoesNotKnowIsRefusedNotAnsweredEmpty(String path) {
		EntityExchangeResult<String> result = this.client.post().uri(path).headers((headers) -> {
			headers.setBasicAuth("mallory", "mallory");
			headers.set("Idempotency-Key", UUID.randomUUID().toString());
		})
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"amount\":1}")
			.exchange()
			.expectBody(String.class)
			.returnResult();
		assertThat(result.getStatus().value()).isEqualTo(500);
		assertThat(result.getResponseBody()).contains("urn:idempotent:scope-unknown").doesNotContain("Exception");
		assertThat(ledger).isEmpty();
	}

	@ParameterizedTest
	@ValueSource(strings = { "/tenant/mono", "/tenant/plain" })
	void aKnownCallerRunsInItsTenantsScope(String path) {
		String key = UUID.randomUUID().toString();
		for (int i = 0; i < 2; i++) {
			EntityExchangeResult<String> result = this.client.post().uri(path).headers((headers) -> {
				headers.setBasicAuth("alice", "alice");
				headers.set("Idempotency-Key", key);
			})
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue("{\"amount\":1}")
				.exchange()
				.expectBody(String.class)
				.returnResult();
			assertThat(result.getStatus().value()).isEqualTo(200);
		}
		assertThat(ledger).hasSize(1);
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(Controllers.class)
	static class App {

		@Bean
		SecurityWebFilterChain securityWebFilterChain(ServerHttpSecurity http) {
			return http.csrf(ServerHttpSecurity.CsrfSpec::disable)
				.authorizeExchange((exchanges) -> exchanges.anyExchange().authenticated())
				.httpBasic((basic) -> {
				})
				.build();
		}

		@Bean
		MapReactiveUserDetailsService users() {
			return new MapReactiveUserDetailsService(
					User.withUsername("alice").password("{noop}alice").roles("USER").build(),
					User.withUsername("mallory").password("{noop}mallory").roles("USER").build());
		}

		/**
		 * Scopes by tenant; knows alice's, not mallory's.
		 */
		@Bean
		ReactiveIdempotencyScopeResolver tenantScopes() {
			Map<String, String> tenants = Map.of("alice", "acme");
			return (context) -> ReactiveSecurityContextHolder.getContext()
				.contextWrite(context)
				.flatMap((security) -> Mono.justOrEmpty(tenants.get(security.getAuthentication().getName())))
				.map((tenant) -> "t=" + tenant);
		}

	}

	@RestController
	static class Controllers {

		@PostMapping("/tenant/mono")
		@Idempotent
		Mono<Map<String, Object>> mono(@RequestBody Map<String, Object> body) {
			return Mono.fromSupplier(() -> run(body));
		}

		@PostMapping("/tenant/future")
		@Idempotent
		CompletableFuture<Map<String, Object>> future(@RequestBody Map<String, Object> body) {
			return CompletableFuture.completedFuture(run(body));
		}

		@PostMapping("/tenant/plain")
		@Idempotent
		Map<String, Object> plain(@RequestBody Map<String, Object> body) {
			return run(body);
		}

		@PostMapping("/tenant/entity")
		@Idempotent
		ResponseEntity<Map<String, Object>> entity(@RequestBody Map<String, Object> body) {
			return ResponseEntity.ok(run(body));
		}

		private static Map<String, Object> run(Map<String, Object> body) {
			ledger.add("ran");
			return Map.of("amount", body.get("amount"));
		}

	}

}
