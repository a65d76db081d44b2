package io.github.idempotent.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.FaultProxy;
import io.github.idempotent.testsupport.TestRedis;
import io.github.idempotent.web.WebTestApplication.Executions;
import io.github.idempotent.web.WebTestApplication.Gate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Network faults between the application and Redis while a call runs, injected by a
 * loopback proxy on the real connection. Each test ends with the same two checks: the
 * method ran at most once for its key, and the key is not left in progress.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=redis", "spring.data.redis.timeout=5s" })
class FaultInjectionHttpTests {

	private static final FaultProxy proxy = FaultProxy.start(TestRedis.host(), TestRedis.port());

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", proxy::port);
	}

	@AfterAll
	static void stopProxy() {
		proxy.close();
	}

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

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

	@AfterEach
	void heal() {
		proxy.pass();
		this.gate.open();
	}

	@Test
	void anOwnerStalledPastItsLeaseWithNobodyTakingOverIsReplayedNotRunAgain() throws Exception {
		String key = UUID.randomUUID().toString();
		String body = "{\"orderNo\":\"F-1\",\"amount\":5}";
		CompletableFuture<HttpResponse<String>> first = this.http.sendAsync(request("/gated-payments", key, body),
				HttpResponse.BodyHandlers.ofString());
		assertThat(this.gate.awaitEntered()).isTrue();
		// Renewals stop reaching Redis; the 300 ms lease runs out there.
		proxy.stall();
		Thread.sleep(900);
		proxy.pass();
		this.gate.open();
		HttpResponse<String> response = first.get(20, TimeUnit.SECONDS);
		assertThat(response.statusCode()).isEqualTo(200);

		HttpResponse<String> retry = send(request("/gated-payments", key, body));
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(response.body());
		assertThat(this.executions.count("gated")).isEqualTo(1);
	}

	private HttpResponse<String> send(HttpRequest request) throws Exception {
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

	private HttpRequest request(String path, String key, String body) {
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(20))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build();
	}

}
