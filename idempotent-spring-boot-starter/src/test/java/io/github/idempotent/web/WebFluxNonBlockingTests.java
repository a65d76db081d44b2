package io.github.idempotent.web;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
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

import io.github.idempotent.testsupport.FaultProxy;
import io.github.idempotent.testsupport.TestRedis;
import io.github.idempotent.web.ThreadsTestApplication.Gate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * No guarded WebFlux call blocks a thread that must not block, as BlockHound sees it:
 * neither the server's event loops, nor Reactor's parallel threads, nor the Redis
 * client's. Redis is reached through a {@link FaultProxy}, so that a renewal can hang
 * while the call completes.
 */
@SpringBootTest(classes = ThreadsTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "idempotent.store.type=redis",
				"spring.data.redis.timeout=3s", "threads-test.lease=900ms" })
class WebFluxNonBlockingTests {

	private static final ParameterizedTypeReference<Map<String, Object>> BODY = new ParameterizedTypeReference<>() {
	};

	private static final FaultProxy proxy = FaultProxy.start(TestRedis.host(), TestRedis.port());

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", proxy::port);
	}

	@LocalServerPort
	private int port;

	@Autowired
	private Gate gate;

	private WebClient client;

	@BeforeEach
	void setUp() {
		proxy.pass();
		this.gate.close();
		this.client = WebClient.create("http://127.0.0.1:" + this.port);
		BlockingCalls.start();
	}

	@AfterEach
	void stopRecording() {
		BlockingCalls.stop();
		proxy.pass();
	}

	@AfterAll
	static void closeProxy() {
		proxy.close();
	}

	@Test
	void firstCallWaitingDuplicateAndReplayBlockNoThread() {
		String key = "threads-nonblocking-" + UUID.randomUUID();
		Mono<ResponseEntity<Map<String, Object>>> first = post(key).cache();
		first.subscribe();
		await().until(() -> this.gate.runs() == 1);
		int claims = this.gate.claims();
		Mono<ResponseEntity<Map<String, Object>>> duplicate = post(key).cache();
		duplicate.subscribe();
		await().until(() -> this.gate.claims() >= claims + 2);
		this.gate.open();
		ResponseEntity<Map<String, Object>> ran = first.block(Duration.ofSeconds(30));
		assertThat(ran.getStatusCode().value()).isEqualTo(200);
		ResponseEntity<Map<String, Object>> waited = duplicate.block(Duration.ofSeconds(30));
		assertThat(waited.getStatusCode().value()).isEqualTo(200);
		assertThat(waited.getBody()).isEqualTo(ran.getBody());
		ResponseEntity<Map<String, Object>> replayed = post(key).block(Duration.ofSeconds(30));
		assertThat(replayed.getHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
		assertThat(replayed.getBody()).isEqualTo(ran.getBody());
		assertThat(this.gate.runs()).isEqualTo(1);
		assertThat(BlockingCalls.ofTheStarter()).isEmpty();
	}

	@Test
	void completingWhileARenewalHangsBlocksNoThread() {
		String key = "threads-stalled-renewal-" + UUID.randomUUID();
		Mono<ResponseEntity<Map<String, Object>>> call = post(key).cache();
		call.subscribe();
		await().until(() -> this.gate.runs() == 1);
		int renewals = this.gate.renewals();
		proxy.stall();
		// A renewal has been sent into the stalled connection: it hangs until the
		// client's command timeout.
		await().until(() -> this.gate.renewals() > renewals);
		this.gate.open();
		// Answered once the store has answered or given up; the method ran once.
		ResponseEntity<Map<String, Object>> response = call.block(Duration.ofSeconds(60));
		assertThat(response.getStatusCode().value()).isEqualTo(200);
		assertThat(response.getBody()).containsEntry("run", 1);
		assertThat(BlockingCalls.ofTheStarter()).isEmpty();
	}

	private Mono<ResponseEntity<Map<String, Object>>> post(String key) {
		return this.client.post()
			.uri("/threads/gated-mono")
			.header("Idempotency-Key", key)
			.retrieve()
			.onStatus((status) -> true, (response) -> Mono.empty())
			.toEntity(BODY);
	}

}
