package io.github.idempotent.web;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.idempotent.web.WebTestApplication.Executions;
import io.github.idempotent.web.WebTestApplication.Gate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code CompletableFuture} handler whose request times out before the future
 * completes: the container answers 503, a status that releases a key, yet the method ran,
 * so a retry must not run it again, and the key must not stay in progress.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "spring.mvc.async.request-timeout=300ms")
class MvcAsyncTimeoutHttpTests {

	@LocalServerPort
	private int port;

	@Autowired
	private Executions executions;

	@Autowired
	private Gate gate;

	@Test
	void aFutureThatCompletesAfterItsRequestTimedOutIsNotRunAgainByARetry() throws Exception {
		HttpClientSupport http = new HttpClientSupport(this.port);
		String key = UUID.randomUUID().toString();
		String body = "{\"orderNo\":\"T-1\",\"amount\":30}";
		assertThat(http.post("/future-gated-payments", key, body).statusCode()).isEqualTo(503);
		assertThat(this.gate.awaitEntered()).isTrue();
		this.gate.open();
		// Once the future has completed, the key is no longer in progress.
		Awaitility.await()
			.atMost(Duration.ofSeconds(10))
			.untilAsserted(
					() -> assertThat(http.post("/future-gated-payments", key, body).statusCode()).isNotEqualTo(409));
		HttpResponse<String> retry = http.post("/future-gated-payments", key, body);
		assertThat(retry.statusCode()).isNotIn(200, 201, 409, 503);
		assertThat(this.executions.count("future-gated")).isEqualTo(1);
	}

}
