package io.github.idempotent.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.annotation.DirtiesContext.ClassMode;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.TestRedis.EmbeddedRedis;
import io.github.idempotent.web.WebTestApplication.Executions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a client sees when Redis dies under a fail-closed store: 503 with Retry-After, and
 * the payment was not made. The same for a {@code CompletableFuture} endpoint, whose
 * claim fails asynchronously, as for a synchronous one.
 * <p>
 * Each variant kills its Redis: it gets a context of its own ({@link DirtiesContext}), on
 * a Redis started for it.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=redis", "spring.data.redis.timeout=500ms",
				"spring.data.redis.connect-timeout=500ms", "idempotent.retry-after=3s" })
@DirtiesContext(classMode = ClassMode.AFTER_EACH_TEST_METHOD)
@ExtendWith(OutputCaptureExtension.class)
class StoreDownHttpTests {

	private static EmbeddedRedis redis;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", StoreDownHttpTests::redisPort);
	}

	private static synchronized int redisPort() {
		if (redis == null) {
			redis = EmbeddedRedis.start();
		}
		return redis.port();
	}

	@AfterEach
	void stopRedis() {
		synchronized (StoreDownHttpTests.class) {
			redis.stop();
			redis = null;
		}
	}

	@LocalServerPort
	private int port;

	@Autowired
	private Executions executions;

	/**
	 * @param endpoint {@code /payments} (synchronous) or {@code /future-payments}, each
	 * counting its executions under its own name
	 */
	@ParameterizedTest
	@ValueSource(strings = { "payments", "future-payments" })
	void storeDownIsServiceUnavailableAndTheMethodDoesNotRun(String endpoint, CapturedOutput output) throws Exception {
		HttpClient http = HttpClient.newHttpClient();
		HttpResponse<String> before = http.send(request(endpoint, UUID.randomUUID().toString()),
				HttpResponse.BodyHandlers.ofString());
		assertThat(before.statusCode()).isEqualTo(201);
		int executionsBefore = this.executions.count(endpoint);
		assertThat(executionsBefore).isPositive();

		redis.stop();

		HttpResponse<String> during = http.send(request(endpoint, UUID.randomUUID().toString()),
				HttpResponse.BodyHandlers.ofString());
		assertThat(during.statusCode()).isEqualTo(503);
		assertThat(during.headers().firstValue("Retry-After")).hasValue("3");
		assertThat(during.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(during.body()).contains("retry later with the same key").doesNotContain("127.0.0.1");
		assertThat(this.executions.count(endpoint)).isEqualTo(executionsBefore);
		// The operator learns of the outage from the log, not only the client.
		assertThat(output).contains("Idempotency store unavailable: refused 1 call");
	}

	private HttpRequest request(String endpoint, String key) {
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/" + endpoint))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString("{\"orderNo\":\"X-1\",\"amount\":5}"))
			.build();
	}

}
