package io.github.idempotent.web;

import java.net.http.HttpResponse;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.web.WebFluxTestApplication.Executions;
import io.github.idempotent.web.WebFluxTestApplication.Payment;
import io.github.idempotent.web.WebFluxTestApplication.PaymentDeclinedException;
import io.github.idempotent.web.WebFluxTestApplication.PaymentRequest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WebFlux handler's future that fails after the handler returned releases its key, as a
 * failed Mono does: the application's answer to the failure (here 402) is not stored.
 */
@SpringBootTest(classes = { WebFluxTestApplication.class, WebFluxFailedFutureTests.FutureDeclines.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "idempotent.store.type=memory" })
class WebFluxFailedFutureTests {

	@LocalServerPort
	private int port;

	@Autowired
	private Executions executions;

	@Test
	void aFutureFailingLaterReleasesTheKey() throws Exception {
		this.executions.reset();
		HttpClientSupport http = new HttpClientSupport(this.port);
		String key = UUID.randomUUID().toString();
		String body = "{\"orderNo\":\"FF-1\",\"amount\":1}";
		assertThat(http.post("/future-declines", key, body).statusCode()).isEqualTo(402);
		HttpResponse<String> retry = http.post("/future-declines", key, body);
		assertThat(retry.statusCode()).isEqualTo(402);
		assertThat(retry.headers().firstValue(IdempotencyResponseHeaders.REPLAYED)).isEmpty();
		assertThat(this.executions.count("future-declines")).isEqualTo(2);
	}

	@TestConfiguration(proxyBeanMethods = false)
	@RestController
	static class FutureDeclines {

		private final Executions executions;

		FutureDeclines(Executions executions) {
			this.executions = executions;
		}

		@PostMapping("/future-declines")
		@Idempotent
		CompletableFuture<Payment> decline(@RequestBody PaymentRequest request) {
			this.executions.increment("future-declines");
			CompletableFuture<Payment> payment = new CompletableFuture<>();
			CompletableFuture.delayedExecutor(100, TimeUnit.MILLISECONDS)
				.execute(() -> payment
					.completeExceptionally(new PaymentDeclinedException("Card declined for " + request.orderNo())));
			return payment;
		}

	}

}
