package io.github.idempotent.store.redis;

import java.time.Instant;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import org.springframework.util.StringUtils;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.testsupport.DamagedBytes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Any value under a record key of the Redis store, as a damaged store or another writer
 * leaves it: either {@link RecordLayout#damage} names what is wrong (the claim answers
 * {@code Damaged}, the call is refused and the method does not run), or it is a
 * tombstone, or every reader the store and the Actuator use reads it without reading past
 * its end. Values are records, placeholders and tombstones as this layout writes them,
 * damaged, and bytes at random.
 * <p>
 * Tries: {@code jqwik.tries.default} (src/test/resources/junit-platform.properties);
 * {@code -Djqwik.tries.default=200000} for a long run.
 */
class RecordLayoutPropertyTests {

	private static final Instant NOW = Instant.parse("2026-12-04T12:00:00Z");

	@Property
	void anyValueIsDamageATombstoneOrReadable(@ForAll("values") byte[] value, @ForAll("pttls") long pttlMillis) {
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

	@Example
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

	@Provide
	Arbitrary<byte[]> values() {
		Arbitrary<byte[]> tokens = Arbitraries.strings()
			.withChars("0123456789abcdef")
			.ofLength(16)
			.map(RecordLayout::token);
		Arbitrary<Fingerprint> fingerprints = Arbitraries.oneOf(
				Arbitraries.strings().withCharRange('a', 'z').ofLength(43).map(Fingerprint::new),
				Arbitraries.strings().ofMinLength(1).ofMaxLength(3).filter(StringUtils::hasText).map(Fingerprint::new),
				Arbitraries.strings()
					.ofMinLength(1)
					.ofMaxLength(60)
					.filter(StringUtils::hasText)
					.map(Fingerprint::new));
		Arbitrary<byte[]> completed = Combinators
			.combine(tokens, fingerprints, Arbitraries.bytes().array(byte[].class).ofMaxSize(32))
			.as((token, fingerprint, result) -> RecordLayout.record(RecordLayout.COMPLETED, token, fingerprint,
					result));
		Arbitrary<byte[]> placeholders = Combinators
			.combine(tokens, fingerprints, Arbitraries.longs().between(0, NOW.getEpochSecond()),
					Arbitraries.integers().between(1, RecordLayout.MAX_ATTEMPT))
			.as((token, fingerprint, second, attempt) -> RecordLayout.inProgress(token, fingerprint, second, attempt,
					second));
		Arbitrary<byte[]> tombstones = Combinators
			.combine(Arbitraries.longs().between(0, NOW.getEpochSecond()),
					Arbitraries.integers().between(1, RecordLayout.MAX_ATTEMPT))
			.as(RecordLayout::tombstone);
		Arbitrary<byte[]> written = Arbitraries.oneOf(completed, placeholders, tombstones);
		return Arbitraries.oneOf(written, written.flatMap(DamagedBytes::of),
				Arbitraries.bytes().array(byte[].class).ofMaxSize(80));
	}

	@Provide
	Arbitrary<Long> pttls() {
		return Arbitraries.oneOf(Arbitraries.of(-2L, -1L, 0L, RecordLayout.REMEMBERED.toMillis()),
				Arbitraries.longs().between(0, 3 * RecordLayout.REMEMBERED.toMillis()));
	}

}
