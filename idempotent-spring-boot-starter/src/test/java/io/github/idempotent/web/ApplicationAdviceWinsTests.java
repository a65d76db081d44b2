package io.github.idempotent.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import io.github.idempotent.core.IdempotencyKeyException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application's own advice for the protocol's exceptions wins over the starter's when
 * it is ordered ahead of it.
 */
@SpringBootTest(classes = { WebTestApplication.class, ApplicationAdviceWinsTests.OwnAdvice.class },
		webEnvironment = WebEnvironment.RANDOM_PORT, properties = "idempotent.store.type=memory")
class ApplicationAdviceWinsTests {

	@LocalServerPort
	private int port;

	@Test
	void applicationAdviceHandlesAMissingKey() throws Exception {
		HttpResponse<String> response = HttpClient.newHttpClient()
			.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/payments"))
				.header("Content-Type", "application/json")
				.POST(HttpRequest.BodyPublishers.ofString("{\"orderNo\":\"A\",\"amount\":1}"))
				.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).isEqualTo(428);
		assertThat(response.body()).isEqualTo("send a key");
	}

	@TestConfiguration(proxyBeanMethods = false)
	@RestControllerAdvice
	@Order(Ordered.HIGHEST_PRECEDENCE)
	static class OwnAdvice {

		@ExceptionHandler
		ResponseEntity<String> missingKey(IdempotencyKeyException ex) {
			return ResponseEntity.status(HttpStatus.PRECONDITION_REQUIRED).body("send a key");
		}

	}

}
