package io.github.idempotent.store.redis;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;
import org.springframework.util.StringUtils;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;

/**
 * The bytes of a Redis record, format 1 (docs/stores.md, "Record format 1"; pinned by the
 * golden records under {@code src/test/resources/format-1}). One string: a hash would
 * leave Redis's compact encoding past 64 bytes a field.
 */
final class RecordLayout {

	static final byte IN_PROGRESS = 'P';

	static final byte COMPLETED = 'C';

	/** Added to an upper-case state byte: the fingerprint is text. */
	private static final int TEXT = 'p' - 'P';

	private static final int TOKEN_LENGTH = 8;

	private static final int FINGERPRINT = 1 + TOKEN_LENGTH;

	private static final int DIGEST_LENGTH = 32;

	/** Characters of a base64 digest of 32 bytes, without padding. */
	private static final int DIGEST_TEXT_LENGTH = 43;

	/** Epoch second modulo 2^24 (194 days). */
	private static final int CLAIM_TIME_LENGTH = 3;

	static final int PLACEHOLDER_END = 2 * CLAIM_TIME_LENGTH + 1;

	/**
	 * How long a placeholder is kept after its lease, so that the claim that takes the
	 * key over knows which attempt it is. Part of the format: every reader subtracts it
	 * from the key's expiry to tell the lease left.
	 */
	static final Duration REMEMBERED = Duration.ofHours(1);

	private static final byte[] TOMBSTONE_MARK = { 'D', 't', 'o', 'm', 'b' };

	static final int MAX_ATTEMPT = 255;

	private static final int CLAIM_TIME_MODULUS = 1 << 24;

	private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();

	private static final Base64.Decoder DECODER = Base64.getUrlDecoder();

	private RecordLayout() {
	}

	/** A token of 16 hex digits as its 64 bits; any other as 8 bytes of its SHA-256. */
	static byte[] token(String token) {
		if (token.length() == 2 * TOKEN_LENGTH
				&& token.chars().allMatch((c) -> (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
			return ByteBuffer.allocate(TOKEN_LENGTH).putLong(Long.parseUnsignedLong(token, 16)).array();
		}
		return Arrays.copyOf(RecordKey.sha256().digest(token.getBytes(StandardCharsets.UTF_8)), TOKEN_LENGTH);
	}

	/** Of two records that {@link #damage} passes. */
	static boolean sameOwner(byte[] record, byte[] other) {
		return Arrays.equals(record, 1, 1 + TOKEN_LENGTH, other, 1, 1 + TOKEN_LENGTH);
	}

	static byte[] record(byte state, byte[] token, Fingerprint fingerprint, byte @Nullable [] result) {
		byte[] digest = digest(fingerprint.value());
		byte[] text = (digest != null) ? null : fingerprint.value().getBytes(StandardCharsets.UTF_8);
		Assert.isTrue(text == null || text.length <= 255,
				"A fingerprint kept in Redis must not be longer than 255 bytes");
		ByteBuffer record = ByteBuffer.allocate(FINGERPRINT + ((digest != null) ? DIGEST_LENGTH : 1 + text.length)
				+ ((result != null) ? result.length : 0));
		record.put((byte) ((digest != null) ? state : state + TEXT)).put(token, 0, TOKEN_LENGTH);
		if (digest != null) {
			record.put(digest);
		}
		else {
			record.put((byte) text.length).put(text);
		}
		return ((result != null) ? record.put(result) : record).array();
	}

	/**
	 * The 32 bytes of a canonical base64 SHA-256 fingerprint (so that the text read back
	 * is the text given), {@code null} for any other text.
	 */
	private static byte @Nullable [] digest(String fingerprint) {
		try {
			byte[] digest = (fingerprint.length() == DIGEST_TEXT_LENGTH) ? DECODER.decode(fingerprint) : null;
			return (digest != null && ENCODER.encodeToString(digest).equals(fingerprint)) ? digest : null;
		}
		catch (IllegalArgumentException ex) {
			return null;
		}
	}

	static byte[] inProgress(byte[] token, Fingerprint fingerprint, long epochSecond) {
		return inProgress(token, fingerprint, epochSecond, 1, 0);
	}

	/** {@code previousEpochSecond} 0: no attempt taken over, or unknown. */
	static byte[] inProgress(byte[] token, Fingerprint fingerprint, long epochSecond, int attempt,
			long previousEpochSecond) {
		Assert.isTrue(attempt >= 1 && attempt <= MAX_ATTEMPT, "attempt must be from 1 to " + MAX_ATTEMPT);
		byte[] end = new byte[PLACEHOLDER_END];
		writeTime(end, 0, epochSecond);
		end[CLAIM_TIME_LENGTH] = (byte) attempt;
		if (previousEpochSecond != 0) {
			writeTime(end, CLAIM_TIME_LENGTH + 1, previousEpochSecond);
		}
		return record(IN_PROGRESS, token, fingerprint, end);
	}

	private static void writeTime(byte[] bytes, int offset, long epochSecond) {
		int second = (int) Math.floorMod(epochSecond, (long) CLAIM_TIME_MODULUS);
		bytes[offset] = (byte) (second >>> 16);
		bytes[offset + 1] = (byte) (second >>> 8);
		bytes[offset + 2] = (byte) second;
	}

	/**
	 * A 3-byte claim time read against {@code now}: a time ahead of {@code now} (a clock
	 * that runs ahead) reads as {@code now}.
	 */
	static Instant readTime(byte[] bytes, int offset, Instant now) {
		int second = ((bytes[offset] & 0xFF) << 16) | ((bytes[offset + 1] & 0xFF) << 8) | (bytes[offset + 2] & 0xFF);
		long ago = Math.floorMod(now.getEpochSecond() - second, (long) CLAIM_TIME_MODULUS);
		if (ago >= CLAIM_TIME_MODULUS / 2) {
			ago = 0;
		}
		return Instant.ofEpochSecond(now.getEpochSecond() - ago);
	}

	static boolean isInProgress(byte[] record) {
		return record.length > 0 && (record[0] == IN_PROGRESS || record[0] == IN_PROGRESS + TEXT);
	}

	/**
	 * Exactly {@code D}, {@code tomb} and 4 bytes. Any other value that starts with
	 * {@code D} is damage, never a free key.
	 */
	static boolean isTombstone(byte[] record) {
		return record.length == 1 + TOKEN_LENGTH
				&& Arrays.equals(record, 0, TOMBSTONE_MARK.length, TOMBSTONE_MARK, 0, TOMBSTONE_MARK.length);
	}

	/** A first byte from 0x01 to 0x1F: a newer version wrote it. */
	static boolean isLaterFormat(byte[] record) {
		return record.length > 0 && record[0] >= 0x01 && record[0] <= 0x1F;
	}

	/** The lease left of a placeholder whose key has {@code pttlMillis} left. */
	static long leaseMillis(long pttlMillis) {
		return Math.max(0, pttlMillis - REMEMBERED.toMillis());
	}

	static int attempt(byte[] record) {
		return Math.max(1, record[record.length - CLAIM_TIME_LENGTH - 1] & 0xFF);
	}

	static @Nullable Instant previousClaimedAt(byte[] record, Instant now) {
		return previousClaimedAt(attempt(record), record, record.length - CLAIM_TIME_LENGTH, now);
	}

	/**
	 * The claim time at {@code offset} of the attempt {@code attempt} took over;
	 * {@code null} on attempt 1, or for a time of all zero (unknown).
	 */
	static @Nullable Instant previousClaimedAt(int attempt, byte[] bytes, int offset, Instant now) {
		return (attempt == 1 || bytes.length < offset + CLAIM_TIME_LENGTH
				|| (bytes[offset] | bytes[offset + 1] | bytes[offset + 2]) == 0) ? null : readTime(bytes, offset, now);
	}

	static boolean isCompleted(byte[] record) {
		return record.length > 0 && (record[0] == COMPLETED || record[0] == COMPLETED + TEXT);
	}

	static @Nullable Instant claimedAt(byte[] record, Instant now) {
		return isInProgress(record) ? readTime(record, resultStart(record), now) : null;
	}

	/**
	 * What keeps {@code record} from being read, or {@code null}: every offset the other
	 * methods use is checked here once.
	 */
	static @Nullable String damage(byte[] record) {
		if (record.length == 0) {
			return "it is empty";
		}
		if (isLaterFormat(record)) {
			return String.format("it starts with 0x%02x, which format 1 reserves for later formats: a newer version "
					+ "of the starter wrote it", record[0] & 0xFF);
		}
		if (!isInProgress(record) && !isCompleted(record)) {
			return String.format("its layout byte 0x%02x is none of this store's ('P', 'C', 'p', 'c')",
					record[0] & 0xFF);
		}
		int header = FINGERPRINT + (isDigestForm(record) ? DIGEST_LENGTH : 1);
		if (record.length < header) {
			return "it is truncated: " + record.length + " bytes, shorter than its " + header + "-byte header";
		}
		if (!isDigestForm(record)) {
			int length = record[FINGERPRINT] & 0xFF;
			if (length == 0) {
				return "its fingerprint is empty";
			}
			if (record.length < header + length) {
				return "it is truncated: " + record.length + " bytes, shorter than its " + length
						+ "-byte fingerprint needs";
			}
			if (!StringUtils.hasText(new String(record, header, length, StandardCharsets.UTF_8))) {
				return "its fingerprint is blank";
			}
		}
		if (isInProgress(record) && record.length - resultStart(record) != PLACEHOLDER_END) {
			return "it is a placeholder with " + (record.length - resultStart(record))
					+ " bytes after its fingerprint, not " + PLACEHOLDER_END;
		}
		return null;
	}

	static Fingerprint fingerprint(byte[] record) {
		if (isDigestForm(record)) {
			return new Fingerprint(
					ENCODER.encodeToString(Arrays.copyOfRange(record, FINGERPRINT, FINGERPRINT + DIGEST_LENGTH)));
		}
		int length = record[FINGERPRINT] & 0xFF;
		return new Fingerprint(new String(record, FINGERPRINT + 1, length, StandardCharsets.UTF_8));
	}

	static byte[] result(byte[] record) {
		return Arrays.copyOfRange(record, resultStart(record), record.length);
	}

	private static int resultStart(byte[] record) {
		return FINGERPRINT + (isDigestForm(record) ? DIGEST_LENGTH : 1 + (record[FINGERPRINT] & 0xFF));
	}

	private static boolean isDigestForm(byte[] record) {
		return record[0] == IN_PROGRESS || record[0] == COMPLETED;
	}

}
