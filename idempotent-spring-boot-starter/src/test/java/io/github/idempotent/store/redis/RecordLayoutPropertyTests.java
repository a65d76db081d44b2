package io.github.idempotent.store.redis;

import java.time.Instant;

import org.junit.jupiter.api.Test;

import org.springframework.util.StringUtils;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.testsupport.Draw;
import io.github.idempotent.testsupport.Tries;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Any value under a record key of the Redis store, as a damaged store or another writer
 * leaves it: either {@link RecordLayout#damage} names what is wrong (the claim answers
 * {@code Damaged}, the call is refused and the method does not run), or it is a
 * tombstone, or every reader the store and the Actuator use reads it without reading past
 * its end. Values are records, placeholders and tombstones as this layout writes them,
 * damaged, and bytes at random. Seeds, tries and replays: {@link Tries}.
 */
class RecordLayoutPropertyTests {

	private static final Instant NOW = Instant.parse("2026-12-04T12:00:00Z");

	@Test
	void anyValueIsDamageATombstoneOrReadable() {
		Tries.check((draw) -> new StoredValue(value(draw), pttl(draw)),
				(stored) -> isDamageATombstoneOrReadable(stored.value(), stored.pttlMillis()));
	}

	private static void isDamageATombstoneOrReadable(byte[] value, long pttlMillis) {
		String damage = RecordLayout.damage(value);
		if (RecordLayout.isTombstone(value)) {
			return;
		}
		if (damage != null) {
			assertThat(damage).isNotBlank();
			return;
		}
		assertThat(RecordLayout.isInProgress(value) || RecordLayout.isCompleted(value)).isTrue();
		assertThat(RecordLayout.fingerprint(value).value()).isNotEmpty();
		assertThat(RecordLayout.result(value)).isNotNull();
		assertThat(RecordLayout.leaseMillis(pttlMillis)).isNotNegative();
		Instant claimedAt = RecordLayout.claimedAt(value, NOW);
		if (RecordLayout.isInProgress(value)) {
			assertThat(claimedAt).isBeforeOrEqualTo(NOW);
			assertThat(RecordLayout.attempt(value)).isBetween(1, RecordLayout.MAX_ATTEMPT);
			RecordLayout.previousClaimedAt(value, NOW);
		}
		else {
			assertThat(claimedAt).isNull();
		}
	}

	@Test
	void aBlankFingerprintIsDamage() {
		// Read as a record before b63ea2e: Fingerprint then refused the blank text.
		byte[] record = new byte[12];
		record[0] = 'c';
		System.arraycopy(RecordLayout.token("0123456789abcdef"), 0, record, 1, 8);
		record[9] = 1;
		record[10] = ' ';
		record[11] = 'V';
		assertThat(RecordLayout.damage(record)).isEqualTo("its fingerprint is blank");
	}

	private static byte[] value(Draw draw) {
		byte[] written = draw.oneOf(
				() -> RecordLayout.record(RecordLayout.COMPLETED, token(draw), fingerprint(draw), draw.bytes(0, 32)),
				() -> {
					byte[] token = token(draw);
					Fingerprint fingerprint = fingerprint(draw);
					long second = draw.between(0, NOW.getEpochSecond());
					return RecordLayout.inProgress(token, fingerprint, second,
							draw.between(1, RecordLayout.MAX_ATTEMPT), second);
				}, () -> RecordLayoutTests.tombstone(draw.between(0, NOW.getEpochSecond()),
						draw.between(1, RecordLayout.MAX_ATTEMPT)));
		return draw.oneOf(() -> written, () -> draw.damaged(written), () -> draw.bytes(0, 80));
	}

	private static byte[] token(Draw draw) {
		return RecordLayout.token(draw.string("0123456789abcdef", 16, 16));
	}

	private static Fingerprint fingerprint(Draw draw) {
		return draw.oneOf(() -> new Fingerprint(draw.string(Draw.range('a', 'z'), 43, 43)),
				() -> new Fingerprint(text(draw, 3)), () -> new Fingerprint(text(draw, 60)));
	}

	private static String text(Draw draw, int maxLength) {
		String text = draw.string(1, maxLength);
		return StringUtils.hasText(text) ? text : text(draw, maxLength);
	}

	private static long pttl(Draw draw) {
		return draw.oneOf(() -> draw.choice(-2L, -1L, 0L, RecordLayout.REMEMBERED.toMillis()),
				() -> draw.between(0, 3 * RecordLayout.REMEMBERED.toMillis()));
	}

	private record StoredValue(byte[] value, long pttlMillis) {
	}

}
