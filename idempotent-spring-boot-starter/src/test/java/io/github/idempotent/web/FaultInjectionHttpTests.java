package io.github.idempotent.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyPolicy;
import io.github.idempotent.testsupport.FaultProxy;
import io.github.idempotent.testsupport.TestRedis;
import io.github.idempotent.web.WebTestApplication.Executions;
import io.github.idempotent.web.WebTestApplication.Gate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Network faults between the application and Redis while a call runs, injected by a
 * loopback proxy on the real connection. Each test ends with the same two checks: the
 * method ran at most once for its key, and the key is not left in progress (read straight
 * from Redis, past the lease, and by a retry that gets a replay).
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=redis", "spring.data.redis.timeout=2s" })
@Import(FaultInjectionHttpTests.LostLeases.class)
class FaultInjectionHttpTests {

	private static final FaultProxy proxy = FaultProxy.start(TestRedis.host(), TestRedis.port());

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", proxy::port);
	}

	private static final LettuceConnectionFactory redis = TestRedis.connectionFactory();

	@AfterAll
	static void stopProxy() {
		proxy.close();
		redis.destroy();
	}

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@LocalServerPort
	private int port;

	@Autowired
	private Executions executions;

	@Autowired
	private Gate gate;

	@Autowired
	private LostLeases lostLeases;

	@BeforeEach
	void reset() {
		this.executions.reset();
		this.gate.reset();
		this.lostLeases.keys.clear();
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

	@Test
	void aReplyToCompleteLostWithItsConnectionIsReplayedNotRunAgain() throws Exception {
		String key = UUID.randomUUID().toString();
		String body = "{\"orderNo\":\"F-2\",\"amount\":5}";
		CompletableFuture<HttpResponse<String>> first = this.http.sendAsync(request("/gated-payments", key, body),
				HttpResponse.BodyHandlers.ofString());
		assertThat(this.gate.awaitEntered()).isTrue();
		// The result reaches Redis and is stored; the answer to it never comes back: the
		// connection is reset while the reply is on its way.
		proxy.stallReplies();
		this.gate.open();
		awaitState(key, "C");
		proxy.cut();
		proxy.pass();
		HttpResponse<String> response = first.get(20, TimeUnit.SECONDS);
		assertThat(response.statusCode()).isEqualTo(200);

		assertRanOnceAndNotLeftInProgress(key, body, response.body());
	}

	@Test
	void aReplyToCompleteThatComesTooLateIsReplayedNotRunAgain() throws Exception {
		String key = UUID.randomUUID().toString();
		String body = "{\"orderNo\":\"F-5\",\"amount\":5}";
		CompletableFuture<HttpResponse<String>> first = this.http.sendAsync(request("/gated-payments", key, body),
				HttpResponse.BodyHandlers.ofString());
		assertThat(this.gate.awaitEntered()).isTrue();
		// The result is stored; its answer is held until the client has given up on it
		// (spring.data.redis.timeout, 2 s), then delivered.
		proxy.stallReplies();
		this.gate.open();
		awaitState(key, "C");
		HttpResponse<String> response = first.get(20, TimeUnit.SECONDS);
		proxy.pass();
		assertThat(response.statusCode()).isEqualTo(200);

		assertRanOnceAndNotLeftInProgress(key, body, response.body());
	}

	@Test
	void aRenewalStalledPastTheLeaseWithADuplicateWaitingBehindItKeepsTheKey() throws Exception {
		String key = UUID.randomUUID().toString();
		String body = "{\"orderNo\":\"F-3\",\"amount\":5}";
		CompletableFuture<HttpResponse<String>> first = this.http.sendAsync(request("/gated-payments", key, body),
				HttpResponse.BodyHandlers.ofString());
		assertThat(this.gate.awaitEntered()).isTrue();
		// Renewals hang on the way to Redis; the 300 ms lease runs out there, and a
		// duplicate arrives while they hang. When the network recovers, the held
		// renewals land before the duplicate's claim and take the key back for the
		// owner: the duplicate is refused, never run.
		proxy.stall();
		Thread.sleep(600);
		CompletableFuture<HttpResponse<String>> duplicate = this.http.sendAsync(request("/gated-payments", key, body),
				HttpResponse.BodyHandlers.ofString());
		Thread.sleep(300);
		proxy.pass();
		HttpResponse<String> refused = duplicate.get(20, TimeUnit.SECONDS);
		assertThat(refused.statusCode()).isIn(409, 503);
		this.gate.open();
		HttpResponse<String> response = first.get(20, TimeUnit.SECONDS);
		assertThat(response.statusCode()).isEqualTo(200);

		assertRanOnceAndNotLeftInProgress(key, body, response.body());
	}

	@Test
	void aClaimWhoseConnectionIsCutBeforeItsReplyRunsTheMethodOnce() throws Exception {
		String key = UUID.randomUUID().toString();
		String body = "{\"orderNo\":\"F-4\",\"amount\":5}";
		// The connection to Redis is up before the fault, as in a running application.
		assertThat(send(request("/orders", UUID.randomUUID().toString(), body)).statusCode()).isEqualTo(201);
		this.executions.reset();
		// The claim reaches Redis and takes the key (for the default 30 s lease); the
		// connection is reset before the answer gets back, and the client sends the
		// claim again on the new connection.
		proxy.stallReplies();
		CompletableFuture<HttpResponse<String>> first = this.http.sendAsync(request("/orders", key, body),
				HttpResponse.BodyHandlers.ofString());
		awaitState(key, "P");
		proxy.cut();
		proxy.pass();
		HttpResponse<String> response = first.get(20, TimeUnit.SECONDS);
		assertThat(response.statusCode()).as("answer to the call whose claim was cut").isEqualTo(201);

		assertRanOnceAndNotLeftInProgress("/orders", "orders", key, body, response.body());
	}

	/**
	 * The two checks every test here ends with: once the first call has answered (and,
	 * for the gated endpoint, its 300 ms lease has passed), the record is not in
	 * progress, and a retry gets the first answer replayed; the method ran once.
	 */
	private void assertRanOnceAndNotLeftInProgress(String key, String body, String firstBody) throws Exception {
		Thread.sleep(400);
		assertRanOnceAndNotLeftInProgress("/gated-payments", "gated", key, body, firstBody);
	}

	private void assertRanOnceAndNotLeftInProgress(String path, String endpoint, String key, String body,
			String firstBody) throws Exception {
		assertThat(state(key)).as("record of key %s", key).isNotEqualTo("P");
		HttpResponse<String> retry = send(request(path, key, body));
		assertThat(retry.statusCode()).isBetween(200, 201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(firstBody);
		assertThat(this.executions.count(endpoint)).as("runs").isEqualTo(1);
		// With one run, a lease reported lost would be a false alarm of a double run.
		assertThat(this.lostLeases.keys).as("keys whose lease was reported lost").isEmpty();
	}

	private static void awaitState(String key, String state) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (!state.equals(state(key))) {
			assertThat(System.nanoTime()).as("record of %s reaching state %s", key, state).isLessThan(deadline);
			Thread.sleep(10);
		}
	}

	/**
	 * State of the record of {@code key} ({@code P}, {@code C}, or null when there is
	 * none), read straight from Redis, not through the proxy.
	 */
	private static @Nullable String state(String key) {
		try (RedisConnection connection = redis.getConnection();
				Cursor<byte[]> keys = connection.keyCommands()
					.scan(ScanOptions.scanOptions().match("*:" + key).count(1000).build())) {
			while (keys.hasNext()) {
				byte[] state = connection.hashCommands().hGet(keys.next(), "s".getBytes(StandardCharsets.UTF_8));
				return (state != null) ? new String(state, StandardCharsets.UTF_8) : null;
			}
			return null;
		}
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

	/**
	 * Keys whose lease the executor reported lost (logged and counted as a possible
	 * double run).
	 */
	static class LostLeases implements IdempotencyObserver {

		final List<String> keys = new CopyOnWriteArrayList<>();

		@Override
		public void leaseLost(IdempotencyPolicy policy, String key) {
			this.keys.add(key);
		}

	}

}
