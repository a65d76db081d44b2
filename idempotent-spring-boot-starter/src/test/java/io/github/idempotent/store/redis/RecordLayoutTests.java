package io.github.idempotent.store.redis;

import java.time.Instant;

import org.junit.jupiter.api.Test;

import io.github.idempotent.store.Fingerprint;

import static org.assertj.core.api.Assertions.assertThat;

class RecordLayoutTests {

	private static final byte[] TOKEN = RecordLayout.token("0123456789abcdef");

	/**
	 * Written by the Lua scripts alone: 'D', "tomb", the claim time (3 bytes), the
	 * attempt.
	 */
	static byte[] tombstone(long epochSecond, int attempt) {
		int second = (int) Math.floorMod(epochSecond, 1L << 24);
		return new byte[] { 'D', 't', 'o', 'm', 'b', (byte) (second >>> 16), (byte) (second >>> 8), (byte) second,
				(byte) attempt };
	}

	@Test
	void aDigestFingerprintIsKeptAsItsThirtyTwoBytesAndReadBackAsTheSameText() {
		Fingerprint fingerprint = new Fingerprint("q4kX1c0QwS6R8jVx2mJ0b3n7Zt5yHc9LpA1eD4fG6hI");
		byte[] record = RecordLayout.record(RecordLayout.COMPLETED, TOKEN, fingerprint, new byte[] { 'V', '1' });
		assertThat(record).hasSize(1 + 8 + 32 + 2);
		assertThat(record[0]).isEqualTo((byte) 'C');
		assertThat(RecordLayout.fingerprint(record)).isEqualTo(fingerprint);
		assertThat(RecordLayout.result(record)).containsExactly('V', '1');
	}

	@Test
	void anyOtherFingerprintIsKeptAsText() {
		// 43 characters, but not a canonical base64 digest: its last character has
		// unused bits set, so decoding and encoding again would change it.
		for (String text : new String[] { "fp-1", "q4kX1c0QwS6R8jVx2mJ0b3n7Zt5yHc9LpA1eD4fG6hJ",
				"q4kX1c0QwS6R8jVx2mJ0b3n7Zt5yHc9LpA1eD4fG6+I" }) {
			byte[] record = RecordLayout.record(RecordLayout.IN_PROGRESS, TOKEN, new Fingerprint(text), null);
			assertThat(record[0]).isEqualTo((byte) 'p');
			assertThat(RecordLayout.fingerprint(record)).isEqualTo(new Fingerprint(text));
			assertThat(RecordLayout.result(record)).isEmpty();
		}
	}

	@Test
	void tokensAreEightBytesAndDistinct() {
		assertThat(TOKEN).containsExactly(0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef);
		assertThat(RecordLayout.token("not-the-owner")).hasSize(8).isNotEqualTo(RecordLayout.token("token"));
		assertThat(RecordLayout.token(RedisIdempotencyStore.newToken())).hasSize(8);
	}

	@Test
	void aPlaceholderWithADigestFingerprintCarriesItsClaimTimeAndAttemptInFortyEightBytes() {
		// 44 bytes is the longest string Redis 7 keeps inside its object header; from 45
		// to 60 bytes a placeholder costs 16 bytes more, whatever its length.
		Fingerprint fingerprint = new Fingerprint("q4kX1c0QwS6R8jVx2mJ0b3n7Zt5yHc9LpA1eD4fG6hI");
		Instant claimed = Instant.parse("2026-12-02T17:00:00Z");
		byte[] record = RecordLayout.inProgress(TOKEN, fingerprint, claimed.getEpochSecond());
		assertThat(record).hasSize(48);
		assertThat(RecordLayout.isInProgress(record)).isTrue();
		assertThat(RecordLayout.damage(record)).isNull();
		assertThat(RecordLayout.fingerprint(record)).isEqualTo(fingerprint);
		assertThat(RecordLayout.claimedAt(record, claimed.plusSeconds(90))).isEqualTo(claimed);
		assertThat(RecordLayout.attempt(record)).isEqualTo(1);
		assertThat(RecordLayout.previousClaimedAt(record, claimed.plusSeconds(90))).isNull();
	}

	@Test
	void aPlaceholderThatTookOverKnowsItsAttemptAndWhenTheLastStarted() {
		Instant previous = Instant.parse("2026-12-02T16:59:00Z");
		Instant claimed = Instant.parse("2026-12-02T17:00:00Z");
		byte[] record = RecordLayout.inProgress(TOKEN, new Fingerprint("fp-text"), claimed.getEpochSecond(), 3,
				previous.getEpochSecond());
		assertThat(RecordLayout.fingerprint(record)).isEqualTo(new Fingerprint("fp-text"));
		assertThat(RecordLayout.claimedAt(record, claimed.plusSeconds(5))).isEqualTo(claimed);
		assertThat(RecordLayout.attempt(record)).isEqualTo(3);
		assertThat(RecordLayout.previousClaimedAt(record, claimed.plusSeconds(5))).isEqualTo(previous);
	}

	@Test
	void aPlaceholdersLeaseIsItsExpiryLessTheHourItIsRememberedFor() {
		long remembered = RecordLayout.REMEMBERED.toMillis();
		assertThat(RecordLayout.leaseMillis(remembered + 5_000)).isEqualTo(5_000);
		assertThat(RecordLayout.leaseMillis(remembered - 5_000)).isZero();
		assertThat(RecordLayout.leaseMillis(-2)).isZero();
	}

	@Test
	void aPlaceholderOfAnyOtherLengthIsDamageNotACallInProgress() {
		// Pre-release builds wrote placeholders ending with the claim time alone: no
		// version was released with them, and format 1 does not read them.
		Fingerprint fingerprint = new Fingerprint("q4kX1c0QwS6R8jVx2mJ0b3n7Zt5yHc9LpA1eD4fG6hI");
		byte[] shorter = RecordLayout.record(RecordLayout.IN_PROGRESS, TOKEN, fingerprint, new byte[] { 1, 2, 3 });
		assertThat(RecordLayout.damage(shorter)).contains("placeholder with 3 bytes after its fingerprint");
	}

	@Test
	void aTombstoneIsNineBytesWithItsMark() {
		byte[] tombstone = tombstone(Instant.parse("2026-12-02T17:00:00Z").getEpochSecond(), 2);
		assertThat(tombstone).hasSize(9);
		assertThat(RecordLayout.isTombstone(tombstone)).isTrue();
		byte[] unmarked = new byte[9];
		unmarked[0] = 'D';
		System.arraycopy(TOKEN, 0, unmarked, 1, 8);
		assertThat(RecordLayout.isTombstone(unmarked)).isFalse();
		assertThat(RecordLayout.damage(unmarked)).contains("layout byte 0x44");
	}

	@Test
	void aValueOfALaterFormatIsNotDamagedButNewer() {
		byte[] later = { 0x02, 'C', 1, 2, 3 };
		assertThat(RecordLayout.isLaterFormat(later)).isTrue();
		assertThat(RecordLayout.damage(later)).contains("a newer version");
		assertThat(RecordLayout.isLaterFormat("garbage".getBytes(java.nio.charset.StandardCharsets.UTF_8))).isFalse();
	}

	@Test
	void theClaimTimeReadsBackAcrossTheWrapOfItsThreeBytes() {
		Fingerprint fingerprint = new Fingerprint("fp-text");
		long wrapsAt = (1L << 24) * 106;
		byte[] record = RecordLayout.inProgress(TOKEN, fingerprint, wrapsAt - 10);
		assertThat(RecordLayout.claimedAt(record, Instant.ofEpochSecond(wrapsAt + 5)))
			.isEqualTo(Instant.ofEpochSecond(wrapsAt - 10));
	}

	@Test
	void aClaimTimeAheadOfTheReadersClockReadsAsNow() {
		Fingerprint fingerprint = new Fingerprint("fp-text");
		Instant now = Instant.parse("2026-12-02T17:00:00Z");
		byte[] record = RecordLayout.inProgress(TOKEN, fingerprint, now.getEpochSecond() + 3);
		assertThat(RecordLayout.claimedAt(record, now)).isEqualTo(now);
	}

	@Test
	void aCompletedRecordHasNoClaimTime() {
		Fingerprint fingerprint = new Fingerprint("q4kX1c0QwS6R8jVx2mJ0b3n7Zt5yHc9LpA1eD4fG6hI");
		assertThat(RecordLayout.claimedAt(
				RecordLayout.record(RecordLayout.COMPLETED, TOKEN, fingerprint, new byte[] { 1, 2, 3 }), Instant.now()))
			.isNull();
	}

}
