package io.github.idempotent.benchmarks.http;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;

import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStringCommands.SetOption;
import org.springframework.data.redis.core.types.Expiration;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import static io.github.idempotent.benchmarks.http.PaymentController.receipt;

/**
 * The references of the Redis store, without the library: the bare work plus one or two
 * Redis PINGs (round trips alone), or plus the two writes a first call makes, as plain
 * commands.
 */
@RestController
@ConditionalOnProperty(name = "idempotent.store.type", havingValue = "redis")
public class RedisReferenceController {

	/**
	 * As long as the in-progress record of {@code /first} (48 bytes): state, token,
	 * fingerprint, claim time and attempt.
	 */
	public static final byte[] PLACEHOLDER = filled(48, 'P');

	/**
	 * As long as the completed record {@code /first} stores for this receipt (250 bytes:
	 * the record's header and the response as written, status, {@code Location} and body;
	 * {@code run-http.sh} prints both lengths).
	 */
	public static final byte[] RESULT = filled(250, 'C');

	public static final Expiration LEASE = Expiration.from(Duration.ofSeconds(30));

	public static final Expiration TTL = Expiration.from(Duration.ofHours(24));

	private final RedisConnectionFactory redis;

	public RedisReferenceController(RedisConnectionFactory redis) {
		this.redis = redis;
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
	 * a {@code SET ... XX PX} of a value the size of {@code /first}'s stored record. What
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

}
