package io.github.idempotent.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.TestRedis.EmbeddedRedis;
import io.github.idempotent.web.WebTestApplication.Executions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a client sees when Redis dies under a fail-closed store: 503 with Retry-After, and
 * the payment was not made.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=redis", "spring.data.redis.timeout=500ms",
				"spring.data.redis.connect-timeout=500ms", "idempotent.retry-after=3s" })
@ExtendWith(OutputCaptureExtension.class)
class StoreDownHttpTests {

	private static final EmbeddedRedis redis = EmbeddedRedis.start();

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", redis::port);
	}

	@AfterAll
	static void stopRedis() {
		redis.stop();
	}

	@LocalServerPort
	private int port;

	@Autowired
	private Executions executions;

	@Test
	void storeDownIsServiceUnavailableAndTheMethodDoesNotRun(CapturedOutput output) throws Exception {
		HttpClient http = HttpClient.newHttpClient();
		HttpResponse<String> before = http.send(request(UUID.randomUUID().toString()),
				HttpResponse.BodyHandlers.ofString());
		assertThat(before.statusCode()).isEqualTo(201);
		int executionsBefore = this.executions.count("payments");

		redis.stop();

		HttpResponse<String> during = http.send(request(UUID.randomUUID().toString()),
				HttpResponse.BodyHandlers.ofString());
		assertThat(during.statusCode()).isEqualTo(503);
		assertThat(during.headers().firstValue("Retry-After")).hasValue("3");
		assertThat(during.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(during.body()).contains("retry later with the same key").doesNotContain("127.0.0.1");
		assertThat(this.executions.count("payments")).isEqualTo(executionsBefore);
		// The operator learns of the outage from the log, not only the client.
		assertThat(output).contains("Idempotency store unavailable: refused 1 call");
	}

	private HttpRequest request(String key) {
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/payments"))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString("{\"orderNo\":\"X-1\",\"amount\":5}"))
			.build();
	}

}
