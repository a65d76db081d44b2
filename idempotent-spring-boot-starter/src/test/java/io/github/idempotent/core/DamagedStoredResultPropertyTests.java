package io.github.idempotent.core;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.ResolvableType;

import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;
import io.github.idempotent.testsupport.DamagedBytes;
import io.github.idempotent.testsupport.QuietLogs;

import static io.github.idempotent.testsupport.DamagedBytes.concat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * What a damaged or crafted store can hand a replay: any bytes as the result of a
 * completed record, read through {@link IdempotencyExecutor} as a duplicate reads them.
 * The outcomes are the ones this version writes (a value, a compressed value, a recorded
 * response plain and deflated, in the general layout and the compact JSON one, a stored
 * error, an unstorable result), cut, flipped, grown and given lengths at the edges (0,
 * 2^31 - 1, 2^31, 2^32 - 1), and bytes at random. Whatever the bytes, the duplicate is
 * answered with the replay or refused with {@link IdempotencyRecordDamagedException} or
 * {@link IdempotencyResultException}; the method never runs, no length read from the
 * record is allocated beyond {@code maxResultSize}, and nothing hangs.
 * <p>
 * Tries: {@code jqwik.tries.default} (src/test/resources/junit-platform.properties);
 * {@code -Djqwik.tries.default=200000} for a long run.
 */
@AddLifecycleHook(QuietLogs.ForProperties.class)
class DamagedStoredResultPropertyTests {

	private static final long MAX_RESULT_SIZE = 64 * 1024;

	private static final Fingerprint PAYLOAD = new Fingerprint("payload");

	private static final IdempotencyPolicy POLICY = new IdempotencyPolicy("damaged", Duration.ofHours(1),
			Duration.ofSeconds(30), Duration.ZERO, Duration.ofSeconds(1), List.of(IllegalStateException.class),
			new JacksonResultCodec(new JsonMapper()).bind(ResolvableType.forClass(String.class)));

	@Property
	void aDuplicateOfADamagedRecordIsAnsweredOrRefusedNeverRun(@ForAll("storedResults") byte[] stored) {
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
		RecordKey key = new RecordKey("idempotent:damaged:k");
		ClaimResult.Acquired claim = (ClaimResult.Acquired) store.claim(key, PAYLOAD, Duration.ofSeconds(30));
		store.complete(key, claim.token(), PAYLOAD, new StoredResult(stored), Duration.ofHours(1));
		AtomicInteger runs = new AtomicInteger();
		try (IdempotencyExecutor executor = new IdempotencyExecutor(store, FailureMode.CLOSED, MAX_RESULT_SIZE,
				IdempotencyObserver.NONE)) {
			assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
				try {
					Object replayed = executor.execute(POLICY, "k", key, PAYLOAD, () -> {
						runs.incrementAndGet();
						return "ran";
					});
					assertThat(replayed).isNotEqualTo("ran");
				}
				catch (IdempotencyResultException | IdempotencyRecordTooNewException | IllegalStateException ex) {
					// IdempotencyRecordDamagedException is an IdempotencyResultException;
					// IdempotencyRecordTooNewException: a marker of a later format;
					// IllegalStateException: a stored error of a type cacheFor lists, as
					// it was stored
					assertThat(ex.getMessage()).isNotNull();
				}
			});
		}
		assertThat(runs).hasValue(0);
	}

	@Property
	void aCompressedBodyThatClaimsMoreThanTheLimitIsRefusedBeforeItIsInflated(@ForAll("edgeLengths") int declared) {
		byte[] stored = ResultCompression.deflate(0).compress(value("x".repeat(100))).bytes();
		writeInt(stored, 1, declared);
		if (Integer.toUnsignedLong(declared) > MAX_RESULT_SIZE) {
			assertThatThrownBy(() -> ResultCompression.inflate(stored, MAX_RESULT_SIZE))
				.isInstanceOf(ResultCompression.CorruptResultException.class)
				.hasMessageContaining("declares");
		}
	}

	@Provide
	Arbitrary<byte[]> storedResults() {
		return Arbitraries.oneOf(written().flatMap(DamagedStoredResultPropertyTests::damaged), written(),
				Arbitraries.bytes().array(byte[].class).ofMaxSize(64),
				Combinators
					.combine(
							Arbitraries.of((byte) 'V', (byte) 'Z', (byte) 'H', (byte) 'J', (byte) 'K', (byte) 'L',
									(byte) 'M', (byte) 'N', (byte) 'O', (byte) 'P', (byte) 'Q', (byte) 'E', (byte) 'X'),
							Arbitraries.bytes().array(byte[].class).ofMaxSize(64))
					.as(DamagedStoredResultPropertyTests::prefixed));
	}

	@Provide
	Arbitrary<Integer> edgeLengths() {
		return Arbitraries.oneOf(Arbitraries.of(0, 1, 100, 101, Integer.MAX_VALUE, Integer.MIN_VALUE, -1),
				Arbitraries.integers());
	}

	/**
	 * Outcomes as this version writes them.
	 */
	private static Arbitrary<byte[]> written() {
		Arbitrary<String> texts = Arbitraries.strings().ofMaxLength(300);
		Arbitrary<ResultCompression> compressions = Arbitraries.of(ResultCompression.none(),
				ResultCompression.deflate(0));
		Arbitrary<byte[]> values = Combinators.combine(texts, compressions)
			.as((text, compression) -> StoredOutcome.value(POLICY, "k", text, MAX_RESULT_SIZE, compression).bytes());
		Arbitrary<byte[]> responses = Combinators
			.combine(Arbitraries.integers().between(100, 999), Arbitraries.strings().alpha().ofMaxLength(20),
					Arbitraries.strings().ofMaxLength(40), texts, compressions)
			.as((status, name, headerValue, body, compression) -> StoredOutcome
				.recorded(POLICY, "k",
						new RecordedResponse(status, name.isEmpty() ? Map.of() : Map.of(name, List.of(headerValue)),
								body.getBytes(StandardCharsets.UTF_8)),
						MAX_RESULT_SIZE, compression)
				.bytes());
		// The compact layout's: 200 or 201, a JSON type, no other header.
		Arbitrary<byte[]> jsonResponses = Combinators
			.combine(Arbitraries.of(200, 201), Arbitraries.of("application/json", "application/json;charset=UTF-8"),
					texts, compressions)
			.as((status, type, body, compression) -> StoredOutcome
				.recorded(POLICY, "k",
						new RecordedResponse(status, Map.of("Content-Type", List.of(type)),
								body.getBytes(StandardCharsets.UTF_8)),
						MAX_RESULT_SIZE, compression)
				.bytes());
		Arbitrary<byte[]> errors = texts
			.map((message) -> StoredOutcome.error(new IllegalStateException(message)).bytes());
		return Arbitraries.oneOf(values, responses, jsonResponses, errors);
	}

	/**
	 * {@code written} damaged as {@link DamagedBytes} does, or with a length field (a
	 * compressed value's 4 bytes, a recorded response's first varint, a deflated JSON
	 * body's length) set to an edge.
	 */
	private static Arbitrary<byte[]> damaged(byte[] written) {
		Arbitrary<byte[]> lengthAtAnEdge = Arbitraries.of(0, Integer.MAX_VALUE, Integer.MIN_VALUE, -1).map((length) -> {
			byte[] copy = written.clone();
			if (copy.length >= 5 && copy[0] == ResultCompression.DEFLATED) {
				writeInt(copy, 1, length);
				return copy;
			}
			if (copy.length >= 3 && copy[0] == RecordedResponse.MARKER) {
				// A varint of five bytes: 2^31 - 1, 2^31, 2^32 - 1 and 0 all fit.
				return concat(Arrays.copyOf(copy, 2),
						concat(varint5(length), Arrays.copyOfRange(copy, 3, copy.length)));
			}
			if (copy.length >= 2 && copy[0] >= RecordedResponse.JSON + 4 && copy[0] <= RecordedResponse.JSON + 7) {
				int end = 1;
				while (end < copy.length && (copy[end] & 0x80) != 0) {
					end++;
				}
				return concat(Arrays.copyOf(copy, 1),
						concat(varint5(length), Arrays.copyOfRange(copy, Math.min(end + 1, copy.length), copy.length)));
			}
			return copy;
		});
		return Arbitraries.oneOf(DamagedBytes.of(written), lengthAtAnEdge);
	}

	private static StoredResult value(String text) {
		return StoredOutcome.value(POLICY, "k", text, MAX_RESULT_SIZE, ResultCompression.none());
	}

	private static byte[] prefixed(byte marker, byte[] rest) {
		return concat(new byte[] { marker }, rest);
	}

	private static byte[] varint5(int value) {
		return new byte[] { (byte) ((value & 0x7F) | 0x80), (byte) (((value >>> 7) & 0x7F) | 0x80),
				(byte) (((value >>> 14) & 0x7F) | 0x80), (byte) (((value >>> 21) & 0x7F) | 0x80),
				(byte) ((value >>> 28) & 0x0F) };
	}

	private static void writeInt(byte[] bytes, int offset, int value) {
		bytes[offset] = (byte) (value >>> 24);
		bytes[offset + 1] = (byte) (value >>> 16);
		bytes[offset + 2] = (byte) (value >>> 8);
		bytes[offset + 3] = (byte) value;
	}

}
