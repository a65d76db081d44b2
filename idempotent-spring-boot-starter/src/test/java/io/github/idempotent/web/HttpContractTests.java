package io.github.idempotent.web;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.TestRedis;
import io.github.idempotent.web.WebTestApplication.Executions;
import io.github.idempotent.web.WebTestApplication.Gate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP contract on Spring MVC, against the Redis store: the cases of
 * {@link AbstractHttpContractTests}, a refused state transition and a storm without
 * {@code waitFor}.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.retry-after=2s", "idempotent.store.type=redis" })
class HttpContractTests extends AbstractHttpContractTests {

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
	}

	@Autowired
	private Executions executions;

	@Autowired
	private Gate gate;

	@BeforeEach
	void reset() {
		this.executions.reset();
	}

	@Override
	protected int runs(String counter) {
		return this.executions.count(counter);
	}

	@Override
	protected String gatedPath() {
		return "/gated-payments";
	}

	@Override
	protected String gatedCounter() {
		return "gated";
	}

	@Override
	protected void closeGate() {
		this.gate.reset();
	}

	@Override
	protected void awaitGateEntered() throws InterruptedException {
		assertThat(this.gate.awaitEntered()).isTrue();
	}

	@Override
	protected void openGate() {
		this.gate.open();
	}

	/**
	 * Without {@code waitFor}, the duplicates of a storm of concurrent clients are
	 * refused with 409 and Retry-After while the first runs (on a slow endpoint rather
	 * than a held one, which WebFlux's application serves instead).
	 */
	@Test
	void stormOfConcurrentClientsRunsTheMethodOnce() throws Exception {
		int clients = 32;
		String key = newKey();
		String body = "{\"orderNo\":\"S-2\",\"amount\":7}";
		ExecutorService pool = Executors.newFixedThreadPool(clients);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<HttpResponse<String>>> futures = new ArrayList<>();
			for (int i = 0; i < clients; i++) {
				futures.add(pool.submit(() -> {
					start.await();
					return post("/slow-payments", key, body);
				}));
			}
			start.countDown();
			List<HttpResponse<String>> responses = new ArrayList<>();
			for (Future<HttpResponse<String>> future : futures) {
				responses.add(future.get(30, TimeUnit.SECONDS));
			}
			assertThat(runs("slow")).isEqualTo(1);
			List<HttpResponse<String>> successes = responses.stream().filter((r) -> r.statusCode() == 200).toList();
			assertThat(successes).isNotEmpty();
			assertThat(successes).extracting(HttpResponse::body).containsOnly(successes.get(0).body());
			for (HttpResponse<String> response : responses) {
				if (response.statusCode() == 409) {
					assertThat(response.headers().firstValue("Retry-After")).hasValue("2");
				}
				else {
					assertThat(response.statusCode()).isEqualTo(200);
				}
			}
			// After the storm, a retry is an identical replay.
			HttpResponse<String> retry = post("/slow-payments", key, body);
			assertThat(retry.body()).isEqualTo(successes.get(0).body());
			assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
			assertThat(runs("slow")).isEqualTo(1);
		}
		finally {
			pool.shutdownNow();
		}
	}

	/**
	 * A response that could not be written after the handler returned (a 406 answered
	 * through the error page) is a failure: neither echoed nor marked.
	 */
	@Test
	void aResponseThatCannotBeWrittenIsNotEchoed() throws Exception {
		HttpResponse<String> response = send(HttpRequest.newBuilder(uri("/payments"))
			.header("Content-Type", "application/json")
			.header("Accept", "application/xml")
			.header("Idempotency-Key", newKey())
			.POST(HttpRequest.BodyPublishers.ofString("{\"orderNo\":\"N-1\",\"amount\":1}"))
			.build());
		assertThat(response.statusCode()).isEqualTo(406);
		assertNotMarked(response);
	}

	/**
	 * The echo is the key the request sent, never one an expression built from its body.
	 */
	@Test
	void theEchoIsTheSentKeyNotTheExpressionsKey() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"" + newKey() + "\",\"amount\":7}";
		HttpResponse<String> first = post("/keyed-payments", key, body);
		HttpResponse<String> replay = post("/keyed-payments", key, body);
		assertThat(first.headers().firstValue("Idempotency-Key")).hasValue(key);
		assertThat(replay.headers().firstValue("Idempotency-Key")).hasValue(key);
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
	}

	/**
	 * A response larger than the starter stores goes out as it is written, with the echo
	 * of a call claimed when its handler was called.
	 */
	@Test
	void aResponseTooLargeToStoreIsEchoed() throws Exception {
		String key = newKey();
		HttpResponse<String> response = send(HttpRequest.newBuilder(uri("/large-tenant-payments"))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.header("X-Tenant", "acme")
			.POST(HttpRequest.BodyPublishers.ofString("{\"orderNo\":\"L-1\",\"amount\":1}"))
			.build());
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.body()).hasSize(1100 * 1024);
		assertThat(response.headers().firstValue("Idempotency-Key")).hasValue(key);
		assertThat(response.headers().firstValue("Idempotent-Replayed")).isEmpty();
	}

}
