package io.github.idempotent.web;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import io.github.idempotent.core.IdempotencyStoreUnavailableException;
import io.github.idempotent.testsupport.TestRedis;
import io.github.idempotent.web.ThreadsTestApplication.FuturePayments;
import io.github.idempotent.web.ThreadsTestApplication.Gate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An application that shuts down while a duplicate waits for a first call still in
 * progress: the duplicate's caller is told to retry later (503 and {@code Retry-After}
 * over HTTP), as when the store cannot be reached. Before, its next claim met a stopped
 * connection factory and the caller got that internal failure; or, when the executor's
 * timer was stopped first, the claim never ran and the caller's future never completed (a
 * WebFlux handler returning a plain value waits for it on its event loop, which the
 * server shares with every other connection of the process).
 */
class ShutdownWhileWaitingTests {

	private ConfigurableApplicationContext context;

	private Gate gate;

	@AfterEach
	void close() {
		if (this.gate != null) {
			this.gate.open();
		}
		if (this.context != null) {
			this.context.close();
		}
	}

	@Test
	void aWaitingDuplicateEndsWhenTheApplicationShutsDown() {
		this.context = new SpringApplicationBuilder(ThreadsTestApplication.class)
			.properties("spring.main.web-application-type=reactive", "server.port=0", "idempotent.store.type=redis",
					"idempotent.default-scope=global", "spring.data.redis.host=" + TestRedis.host(),
					"spring.data.redis.port=" + TestRedis.port())
			.run();
		this.gate = this.context.getBean(Gate.class);
		this.gate.close();
		FuturePayments payments = this.context.getBean(FuturePayments.class);
		String key = "threads-shutdown-" + UUID.randomUUID();
		CompletableFuture<Map<String, Object>> first = payments.pay(key, "succeed");
		await().until(() -> this.gate.runs() == 1);
		int claims = this.gate.claims();
		CompletableFuture<Map<String, Object>> duplicate = payments.pay(key, "succeed");
		// The duplicate has found the first call in progress and claimed again: it
		// waits, on the protocol's timer, for its next claim.
		await().until(() -> this.gate.claims() >= claims + 2);
		assertThat(this.gate.runs()).isEqualTo(1);
		this.context.close();
		assertThat(duplicate).failsWithin(Duration.ofSeconds(20))
			.withThrowableThat()
			.withCauseInstanceOf(IdempotencyStoreUnavailableException.class);
		// Ended without running: the first call is still the only run.
		assertThat(first).isNotDone();
	}

}
