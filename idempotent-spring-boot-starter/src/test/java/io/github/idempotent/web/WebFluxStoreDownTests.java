package io.github.idempotent.web;

import java.time.Duration;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.github.idempotent.testsupport.TestRedis.EmbeddedRedis;
import io.github.idempotent.web.WebFluxTestApplication.Executions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a WebFlux client sees when Redis dies under a fail-closed store: 503 with
 * Retry-After, and the payment was not made.
 */
@SpringBootTest(classes = WebFluxTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "idempotent.store.type=redis",
				"spring.data.redis.timeout=500ms", "spring.data.redis.connect-timeout=500ms",
				"idempotent.retry-after=3s" })
class WebFluxStoreDownTests {

	private static final EmbeddedRedis redis = EmbeddedRedis.start();

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", redis::port);
	}

	@AfterAll
	static void stopRedis() {
		redis.stop();
	}

	@LocalServerPort
	private int port;

	@Autowired
	private Executions executions;

	@Test
	void storeDownIsServiceUnavailableAndTheMethodDoesNotRun() {
		WebTestClient client = WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:" + this.port)
			.responseTimeout(Duration.ofSeconds(30))
			.build();
		assertThat(post(client).getStatus().value()).isEqualTo(201);
		int executionsBefore = this.executions.count("payments");

		redis.stop();

		EntityExchangeResult<String> during = post(client);
		assertThat(during.getStatus().value()).isEqualTo(503);
		assertThat(during.getResponseHeaders().getFirst("Retry-After")).isEqualTo("3");
		assertThat(during.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
		assertThat(during.getResponseBody()).contains("retry later with the same key").doesNotContain("127.0.0.1");
		assertThat(this.executions.count("payments")).isEqualTo(executionsBefore);
	}

	private EntityExchangeResult<String> post(WebTestClient client) {
		return client.post()
			.uri("/payments")
			.contentType(MediaType.APPLICATION_JSON)
			.header("Idempotency-Key", UUID.randomUUID().toString())
			.bodyValue("{\"orderNo\":\"X-1\",\"amount\":5}")
			.exchange()
			.expectBody(String.class)
			.returnResult();
	}

}
