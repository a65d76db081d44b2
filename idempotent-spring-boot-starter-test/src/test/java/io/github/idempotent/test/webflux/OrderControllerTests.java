package io.github.idempotent.test.webflux;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webflux.test.autoconfigure.WebFluxTest;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.github.idempotent.test.DuplicateResponses;
import io.github.idempotent.test.IdempotencyTester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A user's controller test: a {@code @WebFluxTest} slice sees the 409, the 422 and the
 * replay of the starter.
 */
@WebFluxTest(OrderController.class)
class OrderControllerTests {

	@Autowired
	WebTestClient client;

	@Autowired
	IdempotencyTester idempotency;

	@Autowired
	OrderController controller;

	@Test
	void concurrentDuplicatesRunOnceAndReplayTheFirstResponse() {
		int placedBefore = this.controller.placed();
		DuplicateResponses responses = this.idempotency.request(this.client, (c) -> order(c, "/api/orders", "book"))
			.sentConcurrently(8)
			.assertRanOnce()
			.assertReplaysIdentical();
		assertThat(this.controller.placed() - placedBefore).isOne();
		assertThat(responses.first().status()).isEqualTo(201);
	}

	@Test
	void aReusedKeyGets422() {
		this.idempotency.request(this.client, (c) -> order(c, "/api/orders", "pen"))
			.keyReusedBy((c) -> order(c, "/api/orders", "ink"))
			.assertRejected();
	}

	@Test
	void aDuplicateWhileTheFirstRunsGets409WithRetryAfter() throws Exception {
		String key = UUID.randomUUID().toString();
		WebTestClient patient = this.client.mutate().responseTimeout(Duration.ofSeconds(30)).build();
		CompletableFuture<Integer> first = CompletableFuture
			.supplyAsync(() -> order(patient, "/api/slow-orders", "lamp").header("Idempotency-Key", key)
				.exchange()
				.returnResult(byte[].class)
				.getStatus()
				.value());
		await().until(() -> this.controller.slowOrdersStarted() == 1);
		order(this.client, "/api/slow-orders", "lamp").header("Idempotency-Key", key)
			.exchange()
			.expectStatus()
			.isEqualTo(409)
			.expectHeader()
			.exists("Retry-After");
		this.controller.finishSlowOrder();
		assertThat(first.get(30, TimeUnit.SECONDS)).isEqualTo(201);
	}

	private static WebTestClient.RequestHeadersSpec<?> order(WebTestClient client, String path, String item) {
		return client.post().uri(path).contentType(MediaType.APPLICATION_JSON).bodyValue("{\"item\":\"" + item + "\"}");
	}

}
