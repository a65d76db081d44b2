package io.github.idempotent.core;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.zip.Deflater;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.ResolvableType;

import io.github.idempotent.store.StoredResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The stored form of compressed results: what is compressed, what is kept as it was, and
 * that a record read back from a store is never trusted to inflate beyond
 * {@code max-result-size}.
 */
class ResultCompressionTests {

	private static final long MAX_RESULT_SIZE = 1 << 20;

	private static final ResultCompression DEFLATE_ABOVE_256 = ResultCompression.deflate(256);

	private final IdempotencyPolicy orders = policy(ResolvableType.forClass(Order.class));

	@Test
	void aLargeResultIsStoredDeflatedAndReplaysEqual() throws Throwable {
		Order order = order(24);
		StoredResult stored = StoredOutcome.value(this.orders, "k", order, MAX_RESULT_SIZE, DEFLATE_ABOVE_256);
		StoredResult raw = StoredOutcome.value(this.orders, "k", order, MAX_RESULT_SIZE, ResultCompression.none());
		assertThat(raw.size()).isGreaterThan(2000);
		assertThat(stored.bytes()[0]).isEqualTo((byte) 'Z');
		assertThat(stored.size()).isLessThan(raw.size() / 2);
		assertThat(StoredOutcome.replay(this.orders, "k", stored, MAX_RESULT_SIZE)).isEqualTo(order);
	}

	@Test
	void aResultAtOrBelowTheThresholdIsStoredAsEncoded() throws Throwable {
		Order order = order(1);
		StoredResult raw = StoredOutcome.value(this.orders, "k", order, MAX_RESULT_SIZE, ResultCompression.none());
		ResultCompression atSize = ResultCompression.deflate(raw.size() - 1);
		StoredResult stored = StoredOutcome.value(this.orders, "k", order, MAX_RESULT_SIZE, atSize);
		assertThat(stored).isEqualTo(raw);
		assertThat(stored.bytes()[0]).isEqualTo((byte) 'V');
		StoredResult justAbove = StoredOutcome.value(this.orders, "k", order, MAX_RESULT_SIZE,
				ResultCompression.deflate(raw.size() - 2));
		assertThat(justAbove.bytes()[0]).isEqualTo((byte) 'Z');
		assertThat(StoredOutcome.replay(this.orders, "k", justAbove, MAX_RESULT_SIZE)).isEqualTo(order);
	}

	@Test
	void anIncompressibleResultIsStoredAsEncoded() throws Throwable {
		byte[] random = new byte[4096];
		new Random(42).nextBytes(random);
		IdempotencyPolicy rawBytes = new IdempotencyPolicy("raw", Duration.ofMinutes(1), Duration.ofSeconds(30),
				Duration.ZERO, Duration.ofSeconds(1), List.of(), new RawBytes());
		StoredResult stored = StoredOutcome.value(rawBytes, "k", random, MAX_RESULT_SIZE, DEFLATE_ABOVE_256);
		assertThat(stored.bytes()[0]).isEqualTo((byte) 'V');
		assertThat(stored.size()).isEqualTo(random.length + 1);
		assertThat((byte[]) StoredOutcome.replay(rawBytes, "k", stored, MAX_RESULT_SIZE)).isEqualTo(random);
	}

	@Test
	void recordsWrittenUncompressedReplayWithCompressionOnAndCompressedOnesWithItOff() throws Throwable {
		Order order = order(24);
		byte[] json = JsonMapper.builder().build().writeValueAsBytes(order);
		StoredResult previousFormat = new StoredResult(concat(new byte[] { 'V' }, json));
		assertThat(StoredOutcome.replay(this.orders, "k", previousFormat, MAX_RESULT_SIZE)).isEqualTo(order);
		// Replay does not depend on the setting: a record carries its own encoding.
		StoredResult deflated = DEFLATE_ABOVE_256.compress(previousFormat);
		assertThat(deflated.bytes()[0]).isEqualTo((byte) 'Z');
		assertThat(StoredOutcome.replay(this.orders, "k", deflated, MAX_RESULT_SIZE)).isEqualTo(order);
	}

	@Test
	void errorsAndUnstorableOutcomesAreNotCompressed() {
		StoredResult error = StoredOutcome.error(new IllegalStateException("x".repeat(1000)));
		assertThat(DEFLATE_ABOVE_256.compress(error)).isSameAs(error);
	}

	@Test
	void aRecordDeclaringMoreThanMaxResultSizeIsRefusedBeforeInflating() {
		// 1 KB of deflate data that would inflate to 1 GB, declared as such.
		byte[] bomb = deflated(new byte[1 << 20], 1 << 30);
		assertThatExceptionOfType(StoredOutcome.DamagedOutcomeException.class)
			.isThrownBy(() -> StoredOutcome.replay(this.orders, "k", new StoredResult(bomb), MAX_RESULT_SIZE))
			.withMessageContaining("cannot be inflated")
			.withMessageContaining("above idempotent.max-result-size");
	}

	@Test
	void aRecordThatInflatesBeyondWhatItDeclaresIsRefused() {
		// 1 MB of zeros behind a header that claims 100 bytes.
		byte[] bomb = deflated(new byte[1 << 20], 100);
		assertThatExceptionOfType(StoredOutcome.DamagedOutcomeException.class)
			.isThrownBy(() -> StoredOutcome.replay(this.orders, "k", new StoredResult(bomb), MAX_RESULT_SIZE))
			.withMessageContaining("more bytes than it declares");
	}

	@Test
	void aCorruptOrTruncatedRecordIsNamedAsDamage() {
		// The executor turns this into IdempotencyRecordDamagedException, the
		// result-unavailable answer (RedisDamagedRecordHttpTests).
		byte[] good = DEFLATE_ABOVE_256
			.compress(StoredOutcome.value(this.orders, "k", order(24), MAX_RESULT_SIZE, ResultCompression.none()))
			.bytes();
		byte[] truncated = java.util.Arrays.copyOf(good, good.length / 2);
		assertThatExceptionOfType(StoredOutcome.DamagedOutcomeException.class)
			.isThrownBy(() -> StoredOutcome.replay(this.orders, "k", new StoredResult(truncated), MAX_RESULT_SIZE))
			.withMessageContaining("fewer bytes than it declares");
		byte[] garbage = good.clone();
		for (int i = 5; i < garbage.length; i++) {
			garbage[i] = (byte) 0xFF;
		}
		assertThatExceptionOfType(StoredOutcome.DamagedOutcomeException.class)
			.isThrownBy(() -> StoredOutcome.replay(this.orders, "k", new StoredResult(garbage), MAX_RESULT_SIZE))
			.withMessageContaining("cannot be inflated");
		assertThatExceptionOfType(StoredOutcome.DamagedOutcomeException.class)
			.isThrownBy(() -> StoredOutcome.replay(this.orders, "k", new StoredResult(new byte[] { 'Z', 0, 0 }),
					MAX_RESULT_SIZE))
			.withMessageContaining("truncated");
	}

	@Test
	void concurrentCallsShareThePooledDeflatersSafely() throws Exception {
		ExecutorService threads = Executors.newFixedThreadPool(8);
		try {
			List<Future<Boolean>> results = new ArrayList<>();
			for (int t = 0; t < 8; t++) {
				int items = 10 + t;
				results.add(threads.submit(() -> {
					for (int i = 0; i < 200; i++) {
						Order order = order(items + i % 7);
						StoredResult stored = StoredOutcome.value(this.orders, "k", order, MAX_RESULT_SIZE,
								DEFLATE_ABOVE_256);
						try {
							if (!order.equals(StoredOutcome.replay(this.orders, "k", stored, MAX_RESULT_SIZE))) {
								return false;
							}
						}
						catch (Throwable ex) {
							throw new AssertionError(ex);
						}
					}
					return true;
				}));
			}
			for (Future<Boolean> result : results) {
				assertThat(result.get()).isTrue();
			}
		}
		finally {
			threads.shutdownNow();
		}
	}

	private static byte[] deflated(byte[] data, int declaredLength) {
		Deflater deflater = new Deflater(Deflater.BEST_COMPRESSION, true);
		try {
			deflater.setInput(data);
			deflater.finish();
			ByteArrayOutputStream out = new ByteArrayOutputStream();
			out.write('Z');
			out.write(declaredLength >>> 24);
			out.write(declaredLength >>> 16);
			out.write(declaredLength >>> 8);
			out.write(declaredLength);
			byte[] buffer = new byte[8192];
			while (!deflater.finished()) {
				out.write(buffer, 0, deflater.deflate(buffer));
			}
			return out.toByteArray();
		}
		finally {
			deflater.end();
		}
	}

	private static byte[] concat(byte[] a, byte[] b) {
		byte[] all = new byte[a.length + b.length];
		System.arraycopy(a, 0, all, 0, a.length);
		System.arraycopy(b, 0, all, a.length, b.length);
		return all;
	}

	private static IdempotencyPolicy policy(ResolvableType type) {
		return new IdempotencyPolicy("op", Duration.ofMinutes(1), Duration.ofSeconds(30), Duration.ZERO,
				Duration.ofSeconds(1), List.of(), new JacksonResultCodec(JsonMapper.builder().build()).bind(type));
	}

	static Order order(int items) {
		List<Line> lines = new ArrayList<>();
		for (int i = 1; i <= items; i++) {
			lines.add(new Line("SKU-" + (1000 + i), "Item number " + i + " of the order", i % 3 + 1, 1999 + i));
		}
		return new Order("ORD-2026-000123", "PAID", "alice@example.com", lines, 123456, "USD");
	}

	record Order(String orderNo, String status, String email, List<Line> items, long total, String currency) {
	}

	record Line(String sku, String name, int quantity, long unitPrice) {
	}

	/**
	 * Stores a byte array as it is, as a codec of binary results would.
	 */
	private static final class RawBytes implements ResultCodec.Binding {

		@Override
		public void encode(Object value, OutputStream out) {
			try {
				out.write((byte[]) value);
			}
			catch (java.io.IOException ex) {
				throw new IllegalStateException(ex);
			}
		}

		@Override
		public Object decode(byte[] bytes, int offset, int length) {
			return java.util.Arrays.copyOfRange(bytes, offset, offset + length);
		}

	}

}
