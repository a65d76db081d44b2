package io.github.idempotent.web;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.RejectedExecutionException;

import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.github.idempotent.core.IdempotencyExecutor;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WebFlux call that fails before the store is even asked (here: the executor for
 * blocking store calls refuses work, as it does while the application shuts down) still
 * ends its {@code idempotent.call} observation.
 */
@SpringBootTest(classes = { WebFluxTestApplication.class, WebFluxObservationOnEarlyFailureTests.Observations.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "idempotent.store.type=memory" })
class WebFluxObservationOnEarlyFailureTests {

	@LocalServerPort
	private int port;

	@Autowired
	private TestObservationRegistry registry;

	@Autowired
	private IdempotencyExecutor executor;

	@Test
	void anObservationEndsWhenTheCallFailsBeforeItsFutureExists() {
		// The in-memory store has no asynchronous calls: its claim goes to this executor.
		this.executor.setBlockingStoreExecutor((task) -> {
			throw new RejectedExecutionException("shutting down");
		});
		int status = WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:" + this.port)
			.responseTimeout(Duration.ofSeconds(30))
			.build()
			.post()
			.uri("/payments")
			.contentType(MediaType.APPLICATION_JSON)
			.header("Idempotency-Key", UUID.randomUUID().toString())
			.bodyValue("{\"orderNo\":\"OBS-2\",\"amount\":250}")
			.exchange()
			.expectBody(String.class)
			.returnResult()
			.getStatus()
			.value();
		assertThat(status).isGreaterThanOrEqualTo(500);
		assertThat(this.registry).hasObservationWithNameEqualTo("idempotent.call").that().hasBeenStopped();
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Observations {

		@Bean
		TestObservationRegistry observationRegistry() {
			return TestObservationRegistry.create();
		}

	}

}
