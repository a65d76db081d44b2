package io.github.idempotent.web;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

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
 * so a retry is told it completed and is not run again, and the key does not stay in
 * progress. Keyed by the header, the hold is the request's; keyed by an argument, it
 * comes when the future completes, after the request ended.
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

	@BeforeEach
	void reset() {
		this.executions.reset();
		this.gate.reset();
	}

	@ParameterizedTest
	@ValueSource(strings = { "/future-gated-payments", "/future-gated-orders" })
	void aFutureThatCompletesAfterItsRequestTimedOutIsNotRunAgainByARetry(String path) throws Exception {
		HttpClientSupport http = new HttpClientSupport(this.port);
		String key = UUID.randomUUID().toString();
		String body = "{\"orderNo\":\"" + key + "\",\"amount\":30}";
		assertThat(http.post(path, key, body).statusCode()).isEqualTo(503);
		assertThat(this.gate.awaitEntered()).isTrue();
		this.gate.open();
		// Once the future has completed, the key is no longer in progress.
		Awaitility.await()
			.atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(http.post(path, key, body).statusCode()).isNotEqualTo(409));
		HttpResponse<String> retry = http.post(path, key, body);
		assertThat(retry.statusCode()).isEqualTo(500);
		assertThat(retry.body()).contains("urn:idempotent:result-unavailable");
		// Not the first response as written: not marked as a replay.
		AbstractHttpContractTests.assertNotMarked(retry);
		assertThat(this.executions.count("future-gated")).isEqualTo(1);
	}

}
