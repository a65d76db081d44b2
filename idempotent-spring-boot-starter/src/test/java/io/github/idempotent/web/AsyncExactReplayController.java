package io.github.idempotent.web;

import java.util.Map;
import java.util.concurrent.CompletableFuture;

import reactor.core.publisher.Mono;

import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.testsupport.ExactReplays;

/**
 * The exact-replay amounts returned as a {@code CompletableFuture} and as a {@code Mono}:
 * the same controller on Spring MVC and on WebFlux, which both take these return types.
 */
@RestController
class AsyncExactReplayController {

	private final EndpointRuns runs;

	AsyncExactReplayController(EndpointRuns runs) {
		this.runs = runs;
	}

	@PostMapping("/exact/future")
	@Idempotent
	CompletableFuture<Map<String, Object>> future(@RequestBody Map<String, Object> request) {
		return CompletableFuture.supplyAsync(() -> ExactReplays.amounts(this.runs.increment("exact-future")));
	}

	@PostMapping("/exact/mono")
	@Idempotent
	Mono<Object> mono(@RequestBody Map<String, Object> request) {
		return Mono.fromSupplier(() -> ExactReplays.amounts(this.runs.increment("exact-mono")));
	}

}
