package io.github.idempotent.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.IdempotencyTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A key longer than {@code idempotent.max-key-length} is refused with 400, and only a
 * client that sent the key as it is is told to send a shorter one: a key the server built
 * (a key expression, {@link IdempotencyTemplate}) is the server's to fix.
 */
@SpringBootTest(classes = { WebTestApplication.class, KeyLengthMessageHttpTests.KeyedEndpoints.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=memory", "idempotent.max-key-length=20" })
class KeyLengthMessageHttpTests {

	private static final String LONG = "x".repeat(21);

	@LocalServerPort
	private int port;

	@Test
	void aClientsOwnKeyTooLongIsToldToSendAShorterOne() throws Exception {
		HttpResponse<String> response = post("/key-length/header", LONG, "{}");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.body()).contains("longer than the 20 allowed; send a shorter key");
	}

	@Test
	void aKeyBuiltByAKeyExpressionIsNotTheClientsToShorten() throws Exception {
		HttpResponse<String> response = post("/key-length/expression", null, "{\"reference\":\"" + LONG + "\"}");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.body()).contains("longer than the 20 allowed").doesNotContain("send a shorter key");
	}

	@Test
	void aKeyBuiltForTheTemplateIsNotTheClientsToShorten() throws Exception {
		HttpResponse<String> response = post("/key-length/template/" + LONG, null, "{}");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.body()).contains("longer than the 20 allowed").doesNotContain("send a shorter key");
	}

	private HttpResponse<String> post(String path, String key, String body) throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body));
		if (key != null) {
			request.header("Idempotency-Key", key);
		}
		return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	@TestConfiguration(proxyBeanMethods = false)
	@RestController
	static class KeyedEndpoints {

		@Autowired
		IdempotencyTemplate idempotency;

		@PostMapping("/key-length/header")
		@Idempotent
		String header() {
			return "ran";
		}

		@PostMapping("/key-length/expression")
		@Idempotent(key = "#request.reference")
		String expression(@RequestBody Reference request) {
			return "ran";
		}

		@PostMapping("/key-length/template/{reference}")
		String template(@PathVariable String reference) {
			return this.idempotency.operation("key-length").key(reference).execute(String.class, () -> "ran");
		}

		record Reference(String reference) {
		}

	}

}
