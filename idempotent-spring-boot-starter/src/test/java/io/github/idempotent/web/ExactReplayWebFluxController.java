package io.github.idempotent.web;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import reactor.core.publisher.Mono;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.testsupport.ExactReplays;
import io.github.idempotent.web.WebFluxTestApplication.Executions;

/**
 * The WebFlux twins of the MVC exact-replay endpoints: bodies that a re-encoding would
 * change, each counting its runs.
 */
@RestController
class ExactReplayWebFluxController {

	private final Executions executions;

	ExactReplayWebFluxController(Executions executions) {
		this.executions = executions;
	}

	@PostMapping("/exact/untyped-entity")
	@Idempotent
	Mono<ResponseEntity<Map<String, Object>>> untypedEntity(@RequestBody Map<String, Object> request) {
		return Mono.fromSupplier(() -> {
			int run = this.executions.increment("exact-untyped");
			return ResponseEntity.status(HttpStatus.CREATED)
				.header("X-Run", Integer.toString(run))
				.body(ExactReplays.amounts(run));
		});
	}

	@PostMapping("/exact/object")
	@ResponseStatus(HttpStatus.CREATED)
	@Idempotent
	Mono<Object> object(@RequestBody Map<String, Object> request) {
		return Mono.fromSupplier(() -> ExactReplays.amounts(this.executions.increment("exact-object")));
	}

	@PostMapping("/exact/text")
	@Idempotent
	Mono<ResponseEntity<String>> text(@RequestBody Map<String, Object> request) {
		return Mono.fromSupplier(() -> {
			int run = this.executions.increment("exact-text");
			return ResponseEntity.ok()
				.contentType(new MediaType(MediaType.TEXT_PLAIN, StandardCharsets.ISO_8859_1))
				.body(ExactReplays.text(run));
		});
	}

	@PostMapping("/exact/binary")
	@Idempotent
	Mono<ResponseEntity<byte[]>> binary(@RequestBody Map<String, Object> request) {
		return Mono.fromSupplier(() -> {
			int run = this.executions.increment("exact-binary");
			return ResponseEntity.ok().contentType(MediaType.APPLICATION_OCTET_STREAM).body(ExactReplays.bytes(run));
		});
	}

	@PostMapping("/exact/header")
	@Idempotent
	Mono<Map<String, Object>> header(@RequestBody Map<String, Object> request, ServerHttpResponse response) {
		return Mono.fromSupplier(() -> {
			int run = this.executions.increment("exact-header");
			response.getHeaders().set("X-Receipt", "receipt-" + run);
			return ExactReplays.amounts(run);
		});
	}

}
