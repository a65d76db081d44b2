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

	@LocalServerPort
	private int port;

	private HttpClientSupport http() {
		return new HttpClientSupport(this.port);
	}

	@Autowired
	private Gate gate;

	@Test
	void aDuplicateInProgressIsStillConflictWithRetryAfter() throws Exception {
		this.gate.reset();
		String key = UUID.randomUUID().toString();
		String body = "{\"orderNo\":\"CA-1\",\"amount\":1}";
		CompletableFuture<HttpResponse<String>> first = http().client()
			.sendAsync(http().request("/gated-payments", key, body), HttpResponse.BodyHandlers.ofString());
		try {
			assertThat(this.gate.awaitEntered()).isTrue();
			HttpResponse<String> duplicate = http().post("/gated-payments", key, body);
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
		HttpResponse<String> response = http().post("/gated-payments", null, "{\"orderNo\":\"CA-2\",\"amount\":1}");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
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
