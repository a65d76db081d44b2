package io.github.idempotent.benchmarks.webflux;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;

import reactor.core.publisher.Mono;

import org.springframework.data.redis.connection.ReactiveRedisConnection;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStringCommands.SetOption;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.benchmarks.http.PaymentRequest;
import io.github.idempotent.benchmarks.http.Receipt;
import io.github.idempotent.benchmarks.http.RedisReferenceController;

import static io.github.idempotent.benchmarks.http.PaymentController.receipt;

/**
 * The WebFlux counterpart of {@link RedisReferenceController}: the bare work plus one or
 * two Redis PINGs, or plus a first call's two writes as plain commands, through Spring
 * Data Redis's reactive connection (Lettuce, no blocking thread), with no library.
 */
@RestController
class ReactiveRedisReferenceController {

	private final ReactiveRedisConnectionFactory redis;

	ReactiveRedisReferenceController(ReactiveRedisConnectionFactory redis) {
		this.redis = redis;
	}

	@PostMapping("/roundtrip1/payments")
	Mono<ResponseEntity<Receipt>> roundTrip1(@RequestBody PaymentRequest request) {
		return ping().then(Mono.fromSupplier(() -> receipt(request)));
	}

	@PostMapping("/roundtrip2/payments")
	Mono<ResponseEntity<Receipt>> roundTrip2(@RequestBody PaymentRequest request) {
		return ping().then(Mono.fromSupplier(() -> receipt(request))).flatMap((receipt) -> ping().thenReturn(receipt));
	}

	/**
	 * {@code SET ... NX PX ... GET} of a placeholder under a fresh key, the bare work,
	 * then {@code SET ... XX PX} of a value the size of {@code /first}'s stored record.
	 */
	@PostMapping("/writes2/payments")
	Mono<ResponseEntity<Receipt>> writes2(@RequestHeader("Idempotency-Key") String key,
			@RequestBody PaymentRequest request) {
		byte[] redisKey = ("writes2:" + key).getBytes(StandardCharsets.UTF_8);
		Mono<Void> claim = with((connection) -> connection.stringCommands()
			.setGet(ByteBuffer.wrap(redisKey), ByteBuffer.wrap(RedisReferenceController.PLACEHOLDER),
					RedisReferenceController.LEASE, SetOption.SET_IF_ABSENT)
			.then());
		Mono<Void> complete = with((connection) -> connection.stringCommands()
			.set(ByteBuffer.wrap(redisKey), ByteBuffer.wrap(RedisReferenceController.RESULT),
					RedisReferenceController.TTL, SetOption.SET_IF_PRESENT)
			.then());
		return claim.then(Mono.fromSupplier(() -> receipt(request))).flatMap((receipt) -> complete.thenReturn(receipt));
	}

	private Mono<Void> ping() {
		return with((connection) -> connection.ping().then());
	}

	private Mono<Void> with(Function<ReactiveRedisConnection, Mono<Void>> action) {
		return Mono.usingWhen(Mono.fromSupplier(this.redis::getReactiveConnection), action,
				ReactiveRedisConnection::closeLater);
	}

}
