package io.github.idempotent.web;

import java.time.Duration;
import java.util.UUID;

import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WebFlux endpoint over HTTP with an observation registry: each call is observed with
 * its outcome, and the response is still marked as a replay.
 */
@SpringBootTest(classes = { WebFluxTestApplication.class, RedisWebFluxObservationTests.Observations.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "idempotent.store.type=redis" })
class RedisWebFluxObservationTests {

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
	}

	@LocalServerPort
	private int port;

	@Autowired
	private TestObservationRegistry registry;

	@Test
	void firstCallAndReplayAreObservedWithTheirOutcomes() {
		String key = UUID.randomUUID().toString();
		EntityExchangeResult<String> first = post(key);
		assertThat(first.getStatus().value()).isEqualTo(201);
		assertThat(this.registry).hasAnObservation((observation) -> observation.hasNameEqualTo("idempotent.call")
			.hasLowCardinalityKeyValue("outcome", "executed")
			.hasLowCardinalityKeyValue("store", "redis"));
		this.registry.clear();
		EntityExchangeResult<String> replay = post(key);
		assertThat(replay.getResponseHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
		assertThat(replay.getResponseBody()).isEqualTo(first.getResponseBody());
		assertThat(this.registry).hasAnObservation((observation) -> observation.hasNameEqualTo("idempotent.call")
			.hasLowCardinalityKeyValue("outcome", "replayed"));
	}

	private EntityExchangeResult<String> post(String key) {
		return WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:" + this.port)
			.responseTimeout(Duration.ofSeconds(30))
			.build()
			.post()
			.uri("/payments")
			.contentType(MediaType.APPLICATION_JSON)
			.header("Idempotency-Key", key)
			.bodyValue("{\"orderNo\":\"OBS-1\",\"amount\":250}")
			.exchange()
			.expectBody(String.class)
			.returnResult();
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Observations {

		@Bean
		TestObservationRegistry observationRegistry() {
			return TestObservationRegistry.create();
		}

	}

}
