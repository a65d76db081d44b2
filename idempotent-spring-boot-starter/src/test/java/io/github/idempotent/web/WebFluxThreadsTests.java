package io.github.idempotent.web;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;

import io.github.idempotent.testsupport.TestRedis;
import io.github.idempotent.web.ThreadsTestApplication.Gate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Where guarded code runs on WebFlux with the Redis store: never on Lettuce's I/O thread,
 * which reads every Redis reply, the application's own included. The guarded code calls
 * Redis through the application's blocking {@code StringRedisTemplate}; run on that
 * thread, such a call waits for a reply only the waiting thread could read, and fails
 * after the command timeout.
 */
@SpringBootTest(classes = ThreadsTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT, properties = {
		"spring.main.web-application-type=reactive", "idempotent.store.type=redis", "spring.data.redis.timeout=2s" })
class WebFluxThreadsTests {

	private static final ParameterizedTypeReference<Map<String, Object>> BODY = new ParameterizedTypeReference<>() {
	};

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
	}

	@LocalServerPort
	private int port;

	@Autowired
	private Gate gate;

	private WebClient client;

	@BeforeEach
	void setUp() {
		this.gate.close();
		this.client = WebClient.create("http://127.0.0.1:" + this.port);
	}

	@Test
	void monoHandlerRunsOnTheRequestThreadAndMayCallRedis() {
		String key = "threads-mono-" + UUID.randomUUID();
		ResponseEntity<Map<String, Object>> first = post("/threads/mono", key).block(Duration.ofSeconds(30));
		assertThat(first.getStatusCode().value()).isEqualTo(200);
		Map<String, Object> plain = post("/threads/plain-mono", null).block(Duration.ofSeconds(30)).getBody();
		assertThat(pool(first.getBody().get("assembledOn"))).isEqualTo(pool(plain.get("assembledOn")))
			.doesNotStartWith("lettuce");
		assertThat(pool(first.getBody().get("ranOn"))).isEqualTo(pool(plain.get("ranOn")));
		ResponseEntity<Map<String, Object>> replay = post("/threads/mono", key).block(Duration.ofSeconds(30));
		assertThat(replay.getStatusCode().value()).isEqualTo(200);
		assertThat(replay.getHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
		assertThat(replay.getBody()).isEqualTo(first.getBody());
	}

	@Test
	void recordedResponseIsCommittedOffTheStoreThread() {
		String key = "threads-commit-" + UUID.randomUUID();
		// The response of a first call is sent once the store has taken it: what runs
		// on its commit (here a blocking Redis call) must not run where that reply
		// arrived.
		ResponseEntity<Map<String, Object>> first = post("/threads/mono", key).block(Duration.ofSeconds(30));
		assertThat(first.getStatusCode().value()).isEqualTo(200);
		assertThat(first.getHeaders().getFirst("X-Committed-On")).doesNotStartWith("lettuce");
		ResponseEntity<Map<String, Object>> replay = post("/threads/mono", key).block(Duration.ofSeconds(30));
		assertThat(replay.getHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
		assertThat(replay.getHeaders().getFirst("X-Committed-On")).doesNotStartWith("lettuce");
	}

	@Test
	void futureThatWinsTheReclaimRunsOffTheStoreThreadAndMayCallRedis() {
		String key = "threads-future-" + UUID.randomUUID();
		Mono<ResponseEntity<Map<String, Object>>> first = post("/threads/future/" + key + "/fail", null).cache();
		first.subscribe();
		await().until(() -> this.gate.runs() == 1);
		int claims = this.gate.claims();
		Mono<ResponseEntity<Map<String, Object>>> duplicate = post("/threads/future/" + key + "/fail", null).cache();
		duplicate.subscribe();
		// The duplicate has found the first call in progress and claimed again.
		await().until(() -> this.gate.claims() >= claims + 2);
		this.gate.open();
		assertThat(first.block(Duration.ofSeconds(30)).getStatusCode().value()).isEqualTo(402);
		ResponseEntity<Map<String, Object>> ran = duplicate.block(Duration.ofSeconds(30));
		assertThat(ran.getStatusCode().value()).isEqualTo(200);
		assertThat(ran.getBody().get("run")).isEqualTo(2);
		assertThat(ran.getBody().get("ranOn")).asString().doesNotStartWith("lettuce");
		assertThat(ran.getBody().get("completedOn")).asString().doesNotStartWith("lettuce");
	}

	@Test
	void futureReplayedToAWaitingDuplicateCompletesOffTheStoreThread() {
		String key = "threads-replay-" + UUID.randomUUID();
		Mono<ResponseEntity<Map<String, Object>>> first = post("/threads/future/" + key + "/succeed", null).cache();
		first.subscribe();
		await().until(() -> this.gate.runs() == 1);
		int claims = this.gate.claims();
		Mono<ResponseEntity<Map<String, Object>>> duplicate = post("/threads/future/" + key + "/succeed", null).cache();
		duplicate.subscribe();
		await().until(() -> this.gate.claims() >= claims + 2);
		this.gate.open();
		ResponseEntity<Map<String, Object>> ran = first.block(Duration.ofSeconds(30));
		assertThat(ran.getStatusCode().value()).isEqualTo(200);
		ResponseEntity<Map<String, Object>> replayed = duplicate.block(Duration.ofSeconds(30));
		assertThat(replayed.getStatusCode().value()).isEqualTo(200);
		assertThat(replayed.getBody().get("run")).isEqualTo(1);
		assertThat(replayed.getBody().get("count")).isEqualTo(ran.getBody().get("count"));
		assertThat(replayed.getBody().get("completedOn")).asString().doesNotStartWith("lettuce");
		assertThat(this.gate.runs()).isEqualTo(1);
	}

	/**
	 * The pool a thread belongs to: its name without the thread's number.
	 */
	private static String pool(Object threadName) {
		return threadName.toString().replaceAll("[-_]?\\d+$", "");
	}

	private Mono<ResponseEntity<Map<String, Object>>> post(String path, String key) {
		WebClient.RequestBodySpec request = this.client.post().uri(path);
		if (key != null) {
			request.header("Idempotency-Key", key);
		}
		request.bodyValue("{\"order\":\"" + path + "\"}");
		return request.retrieve().onStatus((status) -> true, (response) -> Mono.empty()).toEntity(BODY);
	}

}
