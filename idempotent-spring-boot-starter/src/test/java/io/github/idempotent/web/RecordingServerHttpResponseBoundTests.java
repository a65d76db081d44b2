package io.github.idempotent.web;

import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.ResolvableType;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.mock.http.server.reactive.MockServerHttpResponse;

import io.github.idempotent.core.FailureMode;
import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyPolicy;
import io.github.idempotent.core.JacksonResultCodec;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;
import io.github.idempotent.testsupport.BoundProperties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WebFlux response far above {@code max-result-size} is held only up to the limit, as
 * Spring MVC's is: past it, what was held is sent and the rest passes through, and the
 * client gets every byte in order.
 */
class RecordingServerHttpResponseBoundTests {

	private static final int LIMIT = 64 * 1024;

	private static final int CHUNK = 8 * 1024;

	private static final int CHUNKS = 1280;

	@Test
	void aBodyFarAboveTheLimitIsHeldOnlyUpToItAndReachesTheClientWhole() throws Exception {
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
		RecordKey key = new RecordKey("test:bounded-recording");
		Fingerprint fingerprint = new Fingerprint("fp");
		IdempotencyPolicy policy = new IdempotencyPolicy("op", Duration.ofMinutes(1), Duration.ofSeconds(30),
				Duration.ZERO, Duration.ofSeconds(1), List.of(),
				new JacksonResultCodec(new JsonMapper()).bind(ResolvableType.forClass(String.class)));
		try (IdempotencyExecutor executor = new IdempotencyExecutor(store, FailureMode.CLOSED, LIMIT,
				IdempotencyObserver.NONE)) {
			Client client = new Client();
			RecordingServerHttpResponse response = new RecordingServerHttpResponse(client,
					new WebContract(new IdempotencyResponseHeaders("Idempotency-Key", "Idempotent-Replayed"),
							BoundProperties.defaults(IdempotentWebProperties.class), LIMIT, List::of));
			executor
				.executeAsync(policy, "k", key, fingerprint, () -> CompletableFuture.completedFuture("returned"),
						response.hold(null))
				.join();
			AtomicLong produced = new AtomicLong();
			AtomicLong mostHeld = new AtomicLong();
			MessageDigest sent = MessageDigest.getInstance("SHA-256");
			Flux<DataBuffer> body = Flux.range(0, CHUNKS).map((i) -> {
				byte[] bytes = chunk(i);
				sent.update(bytes);
				// What the recorder holds: produced, not yet passed on to the client.
				mostHeld.accumulateAndGet(produced.addAndGet(CHUNK) - client.received.get(), Math::max);
				return DefaultDataBufferFactory.sharedInstance.wrap(bytes);
			});
			response.writeWith(body).block(Duration.ofSeconds(30));
			assertThat(client.received.get()).isEqualTo((long) CHUNK * CHUNKS);
			assertThat(HexFormat.of().formatHex(client.digest.digest()))
				.isEqualTo(HexFormat.of().formatHex(sent.digest()));
			assertThat(mostHeld.get()).isLessThanOrEqualTo(LIMIT + 2 * CHUNK);
			// The call is completed, its response not stored: the key stays taken.
			assertThat(store.claim(key, fingerprint, Duration.ofSeconds(30))).isInstanceOf(ClaimResult.Completed.class);
		}
	}

	private static byte[] chunk(int index) {
		byte[] bytes = new byte[CHUNK];
		for (int i = 0; i < bytes.length; i++) {
			bytes[i] = (byte) (index * 31 + i);
		}
		return bytes;
	}

	/**
	 * The client's end of the connection: counts and digests what reaches it, holding
	 * nothing.
	 */
	static final class Client extends MockServerHttpResponse {

		final AtomicLong received = new AtomicLong();

		final MessageDigest digest;

		Client() throws Exception {
			this.digest = MessageDigest.getInstance("SHA-256");
		}

		@Override
		protected Mono<Void> writeWithInternal(Publisher<? extends DataBuffer> body) {
			return Flux.from(body).doOnNext((buffer) -> {
				byte[] bytes = new byte[buffer.readableByteCount()];
				buffer.read(bytes);
				this.digest.update(bytes);
				this.received.addAndGet(bytes.length);
				DataBufferUtils.release(buffer);
			}).then();
		}

	}

}
