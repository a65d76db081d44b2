package io.github.idempotent.core;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.ResolvableType;

import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;
import io.github.idempotent.testsupport.Draw;
import io.github.idempotent.testsupport.QuietLogs;
import io.github.idempotent.testsupport.Tries;

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
 * record is allocated beyond {@code maxResultSize}, and nothing hangs. Seeds, tries and
 * replays: {@link Tries}.
 */
class DamagedStoredResultPropertyTests {

	private static final long MAX_RESULT_SIZE = 64 * 1024;

	private static final String ALPHA = Draw.range('a', 'z') + Draw.range('A', 'Z');

	private static final Fingerprint PAYLOAD = new Fingerprint("payload");

	private static final IdempotencyPolicy POLICY = new IdempotencyPolicy("damaged", Duration.ofHours(1),
			Duration.ofSeconds(30), Duration.ZERO, Duration.ofSeconds(1), List.of(IllegalStateException.class),
			new JacksonResultCodec(new JsonMapper()).bind(ResolvableType.forClass(String.class)));

	/**
	 * Markers of this version's layouts and of layouts it does not write.
	 */
	private static final String MARKERS = "VZHJKLMNOPQEX";

	@Test
	void aDuplicateOfADamagedRecordIsAnsweredOrRefusedNeverRun() {
		try (QuietLogs quiet = QuietLogs.ofTheLibrary()) {
			Tries.check(DamagedStoredResultPropertyTests::storedResult,
					DamagedStoredResultPropertyTests::isAnsweredOrRefusedNeverRun);
		}
	}

	@Test
	void aCompressedBodyThatClaimsMoreThanTheLimitIsRefusedBeforeItIsInflated() {
		Tries.check((draw) -> draw.oneOf(() -> draw.choice(0, 1, 100, 101, Integer.MAX_VALUE, Integer.MIN_VALUE, -1),
				() -> draw.between(Integer.MIN_VALUE, Integer.MAX_VALUE)), (declared) -> {
					byte[] stored = ResultCompression.deflate(0).compress(value("x".repeat(100))).bytes();
					writeInt(stored, 1, declared);
					if (Integer.toUnsignedLong(declared) > MAX_RESULT_SIZE) {
						assertThatThrownBy(() -> ResultCompression.inflate(stored, MAX_RESULT_SIZE))
							.isInstanceOf(IllegalArgumentException.class)
							.hasMessageContaining("declares");
					}
				});
	}

	private static void isAnsweredOrRefusedNeverRun(byte[] stored) {
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
					}, null);
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

	/**
	 * Half the time an outcome as written then damaged, where a reader's bounds are
	 * tested; else as written, random, or random after a marker.
	 */
	private static byte[] storedResult(Draw draw) {
		Supplier<byte[]> damaged = () -> damaged(draw, written(draw));
		return draw.oneOf(damaged, damaged, damaged, () -> written(draw), () -> draw.bytes(0, 64),
				() -> concat(new byte[] { (byte) MARKERS.charAt(draw.between(0, MARKERS.length() - 1)) },
						draw.bytes(0, 64)));
	}

	/**
	 * An outcome as this version writes it.
	 */
	private static byte[] written(Draw draw) {
		ResultCompression compression = draw.choice(ResultCompression.none(), ResultCompression.deflate(0));
		return draw.oneOf(() -> StoredOutcome.value(POLICY, "k", text(draw), MAX_RESULT_SIZE, compression).bytes(),
				() -> {
					String name = draw.string(ALPHA, 0, 20);
					String headerValue = draw.string(0, 40);
					return recorded(draw.between(100, 999),
							name.isEmpty() ? Map.of() : Map.of(name, List.of(headerValue)), text(draw), compression);
				},
				// The compact layout's: 200 or 201, a JSON type, no other header.
				() -> recorded(draw.choice(200, 201),
						Map.of("Content-Type",
								List.of(draw.choice("application/json", "application/json;charset=UTF-8"))),
						text(draw), compression),
				() -> StoredOutcome.error(new IllegalStateException(text(draw))).bytes());
	}

	/**
	 * Any text of up to 300 units, or a short text repeated, which deflates as JSON does.
	 */
	private static String text(Draw draw) {
		return draw.oneOf(() -> draw.string(0, 300), () -> draw.string(1, 8).repeat(draw.between(1, 40)));
	}

	private static byte[] recorded(int status, Map<String, List<String>> headers, String body,
			ResultCompression compression) {
		return StoredOutcome
			.recorded(POLICY, "k", new RecordedResponse(status, headers, body.getBytes(StandardCharsets.UTF_8)),
					MAX_RESULT_SIZE, compression)
			.bytes();
	}

	/**
	 * {@code written} damaged as {@link Draw#damaged} does, or with a length field (a
	 * compressed value's 4 bytes, a recorded response's first varint, a deflated JSON
	 * body's length) set to an edge.
	 */
	private static byte[] damaged(Draw draw, byte[] written) {
		return draw.oneOf(() -> draw.damaged(written),
				() -> withLength(written, draw.choice(0, Integer.MAX_VALUE, Integer.MIN_VALUE, -1)));
	}

	private static byte[] withLength(byte[] written, int length) {
		byte[] copy = written.clone();
		if (copy.length >= 5 && copy[0] == ResultCompression.DEFLATED) {
			writeInt(copy, 1, length);
			return copy;
		}
		if (copy.length >= 3 && copy[0] == RecordedResponse.MARKER) {
			// A varint of five bytes: 2^31 - 1, 2^31, 2^32 - 1 and 0 all fit.
			return concat(Arrays.copyOf(copy, 2), concat(varint5(length), Arrays.copyOfRange(copy, 3, copy.length)));
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
	}

	private static StoredResult value(String text) {
		return StoredOutcome.value(POLICY, "k", text, MAX_RESULT_SIZE, ResultCompression.none());
	}

	private static byte[] concat(byte[] first, byte[] second) {
		byte[] all = Arrays.copyOf(first, first.length + second.length);
		System.arraycopy(second, 0, all, first.length, second.length);
		return all;
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
