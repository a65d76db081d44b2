package io.github.idempotent.benchmarks.http;

import java.net.URI;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;

/**
 * Three endpoints that do the same small piece of work, building a payment receipt from
 * the request, and differ only in {@code @Idempotent}. The key comes from the
 * {@code Idempotency-Key} header: the load script sends a fresh one per request to
 * {@code /first} (every call is a first call) and one fixed key to {@code /replay} (every
 * call after the first is a replay). The store's reference endpoints, the same work plus
 * what the store costs without the library, are in {@link RedisReferenceController} and
 * {@link JdbcReferenceController}.
 */
@RestController
public class PaymentController {

	@PostMapping("/bare/payments")
	public ResponseEntity<Receipt> bare(@RequestBody PaymentRequest request) {
		return receipt(request);
	}

	@PostMapping("/first/payments")
	@Idempotent
	public ResponseEntity<Receipt> first(@RequestBody PaymentRequest request) {
		return receipt(request);
	}

	@PostMapping("/replay/payments")
	@Idempotent
	public ResponseEntity<Receipt> replay(@RequestBody PaymentRequest request) {
		return receipt(request);
	}

	/**
	 * The work every endpoint does: a receipt, {@code 201 Created} with its location.
	 */
	public static ResponseEntity<Receipt> receipt(PaymentRequest request) {
		Receipt receipt = Receipt.of(request);
		return ResponseEntity.status(HttpStatus.CREATED)
			.location(URI.create("/payments/" + receipt.paymentId()))
			.body(receipt);
	}

}
