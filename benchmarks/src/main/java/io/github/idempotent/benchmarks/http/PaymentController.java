package io.github.idempotent.benchmarks.http;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStringCommands.SetOption;
import org.springframework.data.redis.core.types.Expiration;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;

/**
 * Three endpoints that do the same small piece of work, building a payment receipt from
 * the request, and differ only in {@code @Idempotent}. The key comes from the
 * {@code Idempotency-Key} header: the load script sends a fresh one per request to
 * {@code /first} (every call is a first call) and one fixed key to {@code /replay} (every
 * call after the first is a replay). The other endpoints are references without the
 * library: the same work plus one or two Redis PINGs (round trips alone), or plus the two
 * writes a first call makes, as plain commands.
 */
@RestController
public class PaymentController {

	/**
	 * As long as the in-progress record of {@link #first}: state, token, fingerprint and
	 * claim time.
	 */
	private static final byte[] PLACEHOLDER = filled(44, 'P');

	/**
	 * As long as the completed record {@link #first} stores for this receipt (235 bytes:
	 * the record's header and the deflated response).
	 */
	private static final byte[] RESULT = filled(235, 'C');

	private static final Expiration LEASE = Expiration.from(Duration.ofSeconds(30));

	private static final Expiration TTL = Expiration.from(Duration.ofHours(24));

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

	/**
	 * The bare work between the two writes that any design storing a result makes, as
	 * plain commands with no library: a {@code SET ... NX PX ... GET} of a placeholder
	 * under a fresh key (from the {@code Idempotency-Key} header, new per request), then
	 * a {@code SET ... XX PX} of a value the size of {@link #first}'s stored record. What
	 * a first call costs Redis and the network before anything the library does: encoding
	 * the result, the fingerprint, the key and fencing the completion by its token.
	 */
	@PostMapping("/writes2/payments")
	public ResponseEntity<Receipt> writes2(@RequestHeader("Idempotency-Key") String key,
			@RequestBody PaymentRequest request) {
		byte[] redisKey = ("writes2:" + key).getBytes(StandardCharsets.UTF_8);
		try (RedisConnection connection = this.redis.getConnection()) {
			connection.stringCommands().setGet(redisKey, PLACEHOLDER, LEASE, SetOption.SET_IF_ABSENT);
		}
		ResponseEntity<Receipt> receipt = receipt(request);
		try (RedisConnection connection = this.redis.getConnection()) {
			connection.stringCommands().set(redisKey, RESULT, TTL, SetOption.SET_IF_PRESENT);
		}
		return receipt;
	}

	private static byte[] filled(int length, char state) {
		byte[] bytes = new byte[length];
		Arrays.fill(bytes, (byte) 'x');
		bytes[0] = (byte) state;
		return bytes;
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
