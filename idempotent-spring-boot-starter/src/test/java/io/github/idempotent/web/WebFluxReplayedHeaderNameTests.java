package io.github.idempotent.web;

import java.net.http.HttpResponse;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.TestRedis;

import static io.github.idempotent.testsupport.ExactReplays.post;
import static io.github.idempotent.testsupport.ExactReplays.send;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code idempotent.web.replayed-header} names the replay marker on WebFlux as on MVC.
 */
@SpringBootTest(classes = WebFluxTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "idempotent.store.type=redis",
				"idempotent.web.replayed-header=X-Idempotent-Replay" })
class WebFluxReplayedHeaderNameTests {

	@LocalServerPort
	private int port;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
	}

	@Test
	void aReplayIsMarkedWithTheConfiguredHeader() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<byte[]> first = send(post(this.port, "/exact/untyped-entity", key).build());
		HttpResponse<byte[]> replay = send(post(this.port, "/exact/untyped-entity", key).build());
		assertThat(first.headers().firstValue("X-Idempotent-Replay")).isEmpty();
		assertThat(replay.headers().firstValue("X-Idempotent-Replay")).hasValue("true");
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(replay.body()).isEqualTo(first.body());
	}

}
