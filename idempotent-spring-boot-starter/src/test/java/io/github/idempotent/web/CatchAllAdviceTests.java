package io.github.idempotent.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import io.github.idempotent.web.WebTestApplication.Gate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application's catch-all {@code @ExceptionHandler(Exception.class)}, in an advice of
 * the default order, does not swallow the protocol's answers: a duplicate still gets 409
 * with Retry-After, a missing key 400.
 */
@SpringBootTest(classes = { WebTestApplication.class, CatchAllAdviceTests.CatchAll.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=memory", "idempotent.retry-after=2s" })
class CatchAllAdviceTests {

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@LocalServerPort
	private int port;

	@Autowired
	private Gate gate;

	@Test
	void aDuplicateInProgressIsStillConflictWithRetryAfter() throws Exception {
		this.gate.reset();
		String key = UUID.randomUUID().toString();
		String body = "{\"orderNo\":\"CA-1\",\"amount\":1}";
		CompletableFuture<HttpResponse<String>> first = this.http.sendAsync(request(key, body),
				HttpResponse.BodyHandlers.ofString());
		try {
			assertThat(this.gate.awaitEntered()).isTrue();
			HttpResponse<String> duplicate = this.http.send(request(key, body), HttpResponse.BodyHandlers.ofString());
			assertThat(duplicate.statusCode()).isEqualTo(409);
			assertThat(duplicate.headers().firstValue("Retry-After")).hasValue("2");
		}
		finally {
			this.gate.open();
		}
		assertThat(first.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
	}

	@Test
	void aMissingKeyIsStillBadRequest() throws Exception {
		HttpResponse<String> response = this.http.send(request(null, "{\"orderNo\":\"CA-2\",\"amount\":1}"),
				HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
	}

	private HttpRequest request(String key, String body) {
		HttpRequest.Builder builder = HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/gated-payments"))
			.timeout(Duration.ofSeconds(20))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body));
		if (key != null) {
			builder.header("Idempotency-Key", key);
		}
		return builder.build();
	}

	@TestConfiguration(proxyBeanMethods = false)
	@RestControllerAdvice
	static class CatchAll {

		@ExceptionHandler(Exception.class)
		ResponseEntity<String> anything(Exception ex) {
			return ResponseEntity.status(HttpStatus.INTERNAL_SERVER_ERROR).body("something went wrong");
		}

	}

}
