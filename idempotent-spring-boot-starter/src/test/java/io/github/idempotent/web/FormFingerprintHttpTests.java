package io.github.idempotent.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.idempotent.web.WebTestApplication.Executions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A form post is fingerprinted by its fields as the client meant them: decoded once, as
 * the handler reads them.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "idempotent.store.type=memory")
class FormFingerprintHttpTests {

	private final HttpClient http = HttpClient.newHttpClient();

	@LocalServerPort
	private int port;

	@Autowired
	private Executions executions;

	@BeforeEach
	void reset() {
		this.executions.reset();
	}

	@Test
	void aFieldWithAPercentSignRunsOnceAndReplays() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<String> first = post(key, "orderNo=100%25");
		HttpResponse<String> replay = post(key, "orderNo=100%25");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.body()).contains("\"orderNo\":\"100%\"");
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.executions.count("form")).isEqualTo(1);
	}

	@Test
	void fieldsThatDifferOnlyOnceDecodedAreAnotherPayload() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<String> first = post(key, "orderNo=aA");
		HttpResponse<String> other = post(key, "orderNo=a%2541");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(other.statusCode()).isEqualTo(422);
		assertThat(this.executions.count("form")).isEqualTo(1);
	}

	private HttpResponse<String> post(String key, String form) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + "/form-payments"))
			.header("Content-Type", "application/x-www-form-urlencoded")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString(form))
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

}
