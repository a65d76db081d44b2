package io.github.idempotent.benchmarks.http;

import java.net.URI;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
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
 * call after the first is a replay).
 */
@RestController
public class PaymentController {

	private final RedisConnectionFactory redis;

	public PaymentController(RedisConnectionFactory redis) {
		this.redis = redis;
	}

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
	 * The bare work plus one Redis PING on the connection the store uses: what one round
	 * trip costs here, whatever is sent, to compare with a replay (one round trip).
	 */
	@PostMapping("/roundtrip1/payments")
	public ResponseEntity<Receipt> roundTrip1(@RequestBody PaymentRequest request) {
		ping();
		return receipt(request);
	}

	/**
	 * The bare work between two PINGs: the floor of any design that, like a first call,
	 * claims before the work and stores after it.
	 */
	@PostMapping("/roundtrip2/payments")
	public ResponseEntity<Receipt> roundTrip2(@RequestBody PaymentRequest request) {
		ping();
		ResponseEntity<Receipt> receipt = receipt(request);
		ping();
		return receipt;
	}

	private void ping() {
		try (RedisConnection connection = this.redis.getConnection()) {
			connection.ping();
		}
	}

	private static ResponseEntity<Receipt> receipt(PaymentRequest request) {
		Receipt receipt = Receipt.of(request);
		return ResponseEntity.status(HttpStatus.CREATED)
			.location(URI.create("/payments/" + receipt.paymentId()))
			.body(receipt);
	}

}
