package io.github.idempotent.web;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.testsupport.ExactReplays;
import io.github.idempotent.web.WebTestApplication.Executions;

/**
 * Endpoints whose bodies a re-encoding would change: untyped amounts, text in a charset
 * other than UTF-8, bytes. Each counts its runs and makes a body that differs from run to
 * run, so that a replay that ran the method again shows.
 */
@RestController
class ExactReplayController {

	private final Executions executions;

	ExactReplayController(Executions executions) {
		this.executions = executions;
	}

	@PostMapping("/exact/untyped-entity")
	@Idempotent
	ResponseEntity<Map<String, Object>> untypedEntity(@RequestBody Map<String, Object> request) {
		int run = this.executions.increment("exact-untyped");
		return ResponseEntity.status(HttpStatus.CREATED)
			.header("X-Run", Integer.toString(run))
			.body(ExactReplays.amounts(run));
	}

	@PostMapping("/exact/object")
	@ResponseStatus(HttpStatus.CREATED)
	@Idempotent
	Object object(@RequestBody Map<String, Object> request) {
		return ExactReplays.amounts(this.executions.increment("exact-object"));
	}

	@PostMapping(path = "/exact/text")
	@Idempotent
	ResponseEntity<String> text(@RequestBody Map<String, Object> request) {
		int run = this.executions.increment("exact-text");
		return ResponseEntity.ok()
			.contentType(new MediaType(MediaType.TEXT_PLAIN, StandardCharsets.ISO_8859_1))
			.body(ExactReplays.text(run));
	}

	@PostMapping(path = "/exact/binary")
	@Idempotent
	ResponseEntity<byte[]> binary(@RequestBody Map<String, Object> request) {
		int run = this.executions.increment("exact-binary");
		return ResponseEntity.ok().contentType(MediaType.APPLICATION_OCTET_STREAM).body(ExactReplays.bytes(run));
	}

	/**
	 * A primitive: a replay cannot stand in for it with nothing, so it keeps the codec.
	 */
	@PostMapping("/exact/count")
	@Idempotent
	long count(@RequestBody Map<String, Object> request) {
		return 1000L + this.executions.increment("exact-count");
	}

	/**
	 * A view: a redirect that the container writes, which keeps the codec too.
	 */
	@org.springframework.stereotype.Controller
	static class RedirectController {

		private final Executions executions;

		RedirectController(Executions executions) {
			this.executions = executions;
		}

		@PostMapping("/exact/redirect")
		@Idempotent
		String redirect(@RequestBody Map<String, Object> request) {
			return "redirect:/orders/" + this.executions.increment("exact-redirect");
		}

	}

	@PostMapping("/exact/header")
	@Idempotent
	Map<String, Object> header(@RequestBody Map<String, Object> request, HttpServletResponse response) {
		int run = this.executions.increment("exact-header");
		response.setHeader("X-Receipt", "receipt-" + run);
		return ExactReplays.amounts(run);
	}

}
