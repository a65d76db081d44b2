package io.github.idempotent.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.idempotent.web.WebTestApplication.Executions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code idempotent.web.header-name} is the header a client is told to send, also by a
 * handler whose scope comes from its arguments.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=memory", "idempotent.web.header-name=X-Request-Key" })
class KeyHeaderNameHttpTests {

	private final HttpClient http = HttpClient.newHttpClient();

	@LocalServerPort
	private int port;

	@Autowired
	private Executions executions;

	@Test
	void aMissingKeyOfAScopedHandlerNamesTheConfiguredHeader() throws Exception {
		this.executions.reset();
		HttpResponse<String> missing = send(tenantPayment(null));
		assertThat(missing.statusCode()).isEqualTo(400);
		assertThat(missing.body()).contains("X-Request-Key").doesNotContain("Idempotency-Key");
		assertThat(this.executions.count("tenant")).isZero();
	}

	@Test
	void theConfiguredHeaderKeysAScopedHandler() throws Exception {
		this.executions.reset();
		String key = UUID.randomUUID().toString();
		HttpResponse<String> first = send(tenantPayment(key));
		HttpResponse<String> replay = send(tenantPayment(key));
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue("X-Request-Key")).hasValue(key);
		assertThat(this.executions.count("tenant")).isEqualTo(1);
	}

	private HttpRequest tenantPayment(String key) {
		HttpRequest.Builder request = HttpRequest
			.newBuilder(URI.create("http://localhost:" + this.port + "/tenant-payments"))
			.header("Content-Type", "application/json")
			.header("X-Tenant", "acme")
			.POST(HttpRequest.BodyPublishers.ofString("{\"orderNo\":\"T-1\",\"amount\":5}"));
		if (key != null) {
			request.header("X-Request-Key", key);
		}
		return request.build();
	}

	private HttpResponse<String> send(HttpRequest request) throws Exception {
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

}
