package io.github.idempotent.web;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.InspectableIdempotencyStore;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A subclass of {@link PrincipalScopeResolver} that puts each caller in a tenant is
 * honoured on every stack and for every return type: the record of alice's call lives in
 * {@code tenant-acme|u=alice}, never in the bare {@code u=alice} that another tenant's
 * alice would share. One subclass per stack.
 */
@Import({ AbstractTenantScopeTests.Tenants.class, AbstractTenantScopeTests.TenantStatementsController.class })
public abstract class AbstractTenantScopeTests {

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
	}

	static final AtomicInteger runs = new AtomicInteger();

	@LocalServerPort
	private int port;

	@Autowired
	private IdempotencyStore store;

	private WebTestClient client;

	@BeforeEach
	void client() {
		this.client = WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:" + this.port)
			.responseTimeout(Duration.ofSeconds(30))
			.build();
	}

	@ParameterizedTest
	@ValueSource(strings = { "plain", "future", "mono" })
	void theTenantOfTheResolverSubclassScopesTheRecord(String kind) {
		String key = UUID.randomUUID().toString();
		EntityExchangeResult<String> response = this.client.post()
			.uri("/tenant-statements/" + kind)
			.headers((headers) -> {
				headers.setBasicAuth("alice", "alice");
				headers.set("Idempotency-Key", key);
			})
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"month\":\"2026-11\"}")
			.exchange()
			.expectBody(String.class)
			.returnResult();
		assertThat(response.getStatus().value()).isEqualTo(200);
		assertThat(recordIn("tenant-acme|u=alice", "tenant-" + kind, key)).isTrue();
		assertThat(recordIn("u=alice", "tenant-" + kind, key)).isFalse();
	}

	private boolean recordIn(String scope, String operation, String key) {
		RecordKey recordKey = RecordKey.of("idempotent", scope, operation, key, this.store.maxKeyLength());
		return ((InspectableIdempotencyStore) this.store).inspect(recordKey).isPresent();
	}

	public record StatementRequest(String month) {
	}

	public record Statement(String text) {
	}

	@Configuration(proxyBeanMethods = false)
	static class Tenants {

		@Bean
		PrincipalScopeResolver tenantScopeResolver() {
			return new PrincipalScopeResolver() {

				@Override
				public String resolveScope() {
					return "tenant-acme|" + super.resolveScope();
				}

			};
		}

	}

	@RestController
	static class TenantStatementsController {

		@PostMapping("/tenant-statements/plain")
		@Idempotent(name = "tenant-plain")
		Statement plain(@RequestBody StatementRequest request) {
			return statement(request);
		}

		@PostMapping("/tenant-statements/future")
		@Idempotent(name = "tenant-future")
		CompletableFuture<Statement> future(@RequestBody StatementRequest request) {
			return CompletableFuture.completedFuture(statement(request));
		}

		@PostMapping("/tenant-statements/mono")
		@Idempotent(name = "tenant-mono")
		Mono<Statement> mono(@RequestBody StatementRequest request) {
			return Mono.fromSupplier(() -> statement(request));
		}

		private static Statement statement(StatementRequest request) {
			return new Statement("statement #" + runs.incrementAndGet() + " for " + request.month());
		}

	}

}
