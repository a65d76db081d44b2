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
 * {@link AbstractHttpContractTests}, and those whose endpoints only the MVC application
 * has (a plain return value, an optional key, a SpEL key, a scope expression, a storm
 * without waiting).
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

	@Test
	void replayOfAPlainReturnValueKeepsItsResponseStatus() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"O-1\",\"amount\":10}";
		HttpResponse<String> first = post("/orders", key, body);
		HttpResponse<String> replay = post("/orders", key, body);
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(replay.statusCode()).isEqualTo(201);
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(runs("orders")).isEqualTo(1);
	}

	@Test
	void optionalKeyRunsUnprotectedWithoutAKey() throws Exception {
		for (int i = 0; i < 2; i++) {
			HttpResponse<String> response = send(HttpRequest.newBuilder(uri("/optional-payments"))
				.header("Content-Type", "application/json")
				.POST(HttpRequest.BodyPublishers.ofString("{\"orderNo\":\"P-1\",\"amount\":1}"))
				.build());
			assertThat(response.statusCode()).isEqualTo(200);
		}
		assertThat(runs("optional")).isEqualTo(2);
		String key = newKey();
		post("/optional-payments", key, "{\"orderNo\":\"P-1\",\"amount\":1}");
		post("/optional-payments", key, "{\"orderNo\":\"P-1\",\"amount\":1}");
		assertThat(runs("optional")).isEqualTo(3);
	}

	@Test
	void keyFromASpelExpressionOverTheHeaderArgument() throws Exception {
		String key = newKey();
		HttpResponse<String> first = post("/spel-payments", key, "{\"orderNo\":\"E-1\",\"amount\":1}");
		HttpResponse<String> replay = post("/spel-payments", key, "{\"orderNo\":\"E-1\",\"amount\":1}");
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(runs("spel")).isEqualTo(1);
	}

	@Test
	void aScopeExpressionSeparatesTenants() throws Exception {
		String key = newKey();
		String body = "{\"orderNo\":\"T-1\",\"amount\":1}";
		HttpResponse<String> acme = send(tenantRequest(key, body, "acme"));
		HttpResponse<String> globex = send(tenantRequest(key, body, "globex"));
		HttpResponse<String> acmeAgain = send(tenantRequest(key, body, "acme"));
		assertThat(acme.body()).contains("acme");
		assertThat(globex.body()).contains("globex");
		assertThat(acmeAgain.body()).isEqualTo(acme.body());
		assertThat(runs("tenant")).isEqualTo(2);
	}

	@Test
	void illegalStateTransitionIsConflictWithoutRetryAfter() throws Exception {
		HttpResponse<String> response = post("/refunds", newKey(), "{\"orderNo\":\"R-1\",\"amount\":1}");
		assertThat(response.statusCode()).isEqualTo(409);
		assertThat(response.headers().firstValue("Retry-After")).isEmpty();
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(response.body()).contains("\"currentState\":\"CREATED\"").contains("\"targetState\":\"REFUNDED\"");
	}

	/**
	 * Without {@code waitFor}, the duplicates of a storm are refused with 409 and
	 * Retry-After while the first runs; {@code RedisWebFluxHttpContractTests} storms an
	 * endpoint whose duplicates wait instead.
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

	private HttpRequest tenantRequest(String key, String body, String tenant) {
		return HttpRequest.newBuilder(uri("/tenant-payments"))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.header("X-Tenant", tenant)
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build();
	}

}
