package io.github.idempotent.web;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.web.WebTestApplication.Executions;

/**
 * The responses a {@code @RestController} most often sends, a record as JSON with
 * {@code 200} or {@code 201} and no other header, and ones beside them that differ in one
 * thing: the status, a header, the type. Each counts its runs ({@code json-<endpoint>})
 * and puts the run in its body, with a width that does not change from run to run.
 */
@RestController
class JsonResponsesController {

	private final Executions executions;

	JsonResponsesController(Executions executions) {
		this.executions = executions;
	}

	@PostMapping("/json/ok")
	@Idempotent
	Payment ok(@RequestBody Map<String, Object> request) {
		return Payment.of(this.executions.increment("json-ok"));
	}

	@PostMapping("/json/created")
	@ResponseStatus(HttpStatus.CREATED)
	@Idempotent
	Payment created(@RequestBody Map<String, Object> request) {
		return Payment.of(this.executions.increment("json-created"));
	}

	@PostMapping(path = "/json/charset", produces = "application/json;charset=UTF-8")
	@Idempotent
	Payment charset(@RequestBody Map<String, Object> request) {
		return Payment.of(this.executions.increment("json-charset"));
	}

	/**
	 * About 2 KB of JSON: above the threshold at which results are deflated.
	 */
	@PostMapping("/json/large")
	@Idempotent
	Order large(@RequestBody Map<String, Object> request) {
		int run = this.executions.increment("json-large");
		List<Payment> payments = new ArrayList<>();
		for (int i = 0; i < 16; i++) {
			payments.add(Payment.of(run * 100 + i));
		}
		return new Order(String.format("ord_%08d", run), payments);
	}

	@PostMapping("/json/accepted")
	@ResponseStatus(HttpStatus.ACCEPTED)
	@Idempotent
	Payment accepted(@RequestBody Map<String, Object> request) {
		return Payment.of(this.executions.increment("json-accepted"));
	}

	@PostMapping("/json/header")
	@Idempotent
	ResponseEntity<Payment> header(@RequestBody Map<String, Object> request) {
		int run = this.executions.increment("json-header");
		return ResponseEntity.ok().header("X-Run", Integer.toString(run)).body(Payment.of(run));
	}

	@PostMapping("/json/text")
	@Idempotent
	ResponseEntity<String> text(@RequestBody Map<String, Object> request) {
		int run = this.executions.increment("json-text");
		return ResponseEntity.ok().contentType(MediaType.TEXT_PLAIN).body(String.format("payment %08d", run));
	}

	record Payment(String paymentId, String orderNo, long amountCents, String currency, String status) {

		static Payment of(int run) {
			return new Payment(String.format("pay_%08d", run), "A-1042", 1999, "EUR", "CAPTURED");
		}

	}

	record Order(String orderNo, List<Payment> payments) {
	}

}
