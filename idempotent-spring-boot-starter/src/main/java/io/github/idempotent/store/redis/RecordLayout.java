package io.github.idempotent.store.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;
import org.springframework.util.StringUtils;

import io.github.idempotent.store.Fingerprint;

/**
 * The bytes of a Redis record, record format 1: docs/stores.md ("Record format 1") has
 * them byte by byte, and the golden records under {@code src/test/resources/format-1} pin
 * them. One string per record, not a hash, which leaves Redis's compact encoding once a
 * field passes 64 bytes and then costs about 500 bytes more: a state byte ({@code P} or
 * {@code C}, {@code p} or {@code c} for a fingerprint kept as text rather than as the 32
 * bytes of its SHA-256), the owner's token ({@link #token}), the fingerprint, then the
 * stored outcome, or a placeholder's claim time, attempt and previous claim time
 * ({@link #inProgress}); or a tombstone ({@link #tombstone}), which is no record and
 * fences every owner. A placeholder's key expires {@link #REMEMBERED} after its lease, so
 * that a claim that takes it over knows which attempt it is. A first byte from 0x01 to
 * 0x1F marks a later format ({@link #isLaterFormat}); anything else unreadable is damage
 * ({@link #damage}). The Lua scripts read the state byte, the token and the fixed-size
 * ends; everything else is built and parsed here.
 */
final class RecordLayout {

	static final byte IN_PROGRESS = 'P';

	static final byte COMPLETED = 'C';

	static final byte TOMBSTONE = 'D';

	/** Added to an upper-case state byte: the fingerprint is text. */
	private static final int TEXT = 'p' - 'P';

	private static final int TOKEN_LENGTH = 8;

	private static final int FINGERPRINT = 1 + TOKEN_LENGTH;

	private static final int DIGEST_LENGTH = 32;

	/** Characters of a base64 digest of 32 bytes, without padding. */
	private static final int DIGEST_TEXT_LENGTH = 43;

	/**
	 * Bytes of a claim time: the claiming instance's epoch second modulo 2^24 (194 days).
	 */
	private static final int CLAIM_TIME_LENGTH = 3;

	/**
	 * Bytes after the fingerprint of a placeholder: its claim time, its attempt, and the
	 * claim time of the attempt it took over.
	 */
	static final int PLACEHOLDER_END = 2 * CLAIM_TIME_LENGTH + 1;

	/**
	 * How long a placeholder is kept after its lease ends, so that the claim that takes
	 * the key over knows which attempt it is and when the last one started. A fixed time,
	 * part of the format, the same on every instance, because every reader subtracts it
	 * from the key's expiry to tell the lease left. One hour: clients and message
	 * redeliveries retry a call whose owner died within minutes, and a client that comes
	 * back after an outage within the hour is still told; past it, the retry is attempt 1
	 * again. The operation's TTL would have been the natural length, but a claim does not
	 * carry it.
	 */
	static final Duration REMEMBERED = Duration.ofHours(1);

	/** The mark after {@code D} that tells a tombstone. */
	private static final byte[] TOMBSTONE_MARK = { 't', 'o', 'm', 'b' };

	/** The highest attempt number a placeholder holds: further takeovers stay at it. */
	static final int MAX_ATTEMPT = 255;

	private static final int CLAIM_TIME_MODULUS = 1 << 24;

	private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();

	private static final Base64.Decoder DECODER = Base64.getUrlDecoder();

	private RecordLayout() {
	}

	/**
	 * The 8 bytes a token is stored as: the store's own tokens are 16 hex digits
	 * ({@code RedisIdempotencyStore.newToken}), kept as the 64 bits they spell; any other
	 * text (a token of another store, a test's) as the first 8 bytes of its SHA-256, so
	 * that it can still be compared, only never equal to a token the store issued but by
	 * chance of 2^-64.
	 */
	static byte[] token(String token) {
		byte[] bytes = new byte[TOKEN_LENGTH];
		if (isLowerHex(token)) {
			long bits = Long.parseUnsignedLong(token, 16);
			for (int i = TOKEN_LENGTH - 1; i >= 0; i--) {
				bytes[i] = (byte) bits;
				bits >>>= 8;
			}
			return bytes;
		}
		byte[] digest = sha256(token);
		System.arraycopy(digest, 0, bytes, 0, TOKEN_LENGTH);
		return bytes;
	}

	/**
	 * Whether two records carry the same owner token (bytes 1 to 8, counted from 0).
	 */
	static boolean sameOwner(byte[] record, byte[] other) {
		return record.length > TOKEN_LENGTH && other.length > TOKEN_LENGTH
				&& Arrays.equals(record, 1, 1 + TOKEN_LENGTH, other, 1, 1 + TOKEN_LENGTH);
	}

	private static boolean isLowerHex(String token) {
		if (token.length() != 2 * TOKEN_LENGTH) {
			return false;
		}
		for (int i = 0; i < token.length(); i++) {
			char c = token.charAt(i);
			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
				return false;
			}
		}
		return true;
	}

	private static byte[] sha256(String text) {
		try {
			return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required by every Java platform", ex);
		}
	}

	/**
	 * A record as the scripts write it: {@code state} is {@link #IN_PROGRESS} or
	 * {@link #COMPLETED}, {@code result} {@code null} in progress.
	 */
	static byte[] record(byte state, byte[] token, Fingerprint fingerprint, byte @Nullable [] result) {
		byte[] digest = digest(fingerprint.value());
		byte[] text = (digest != null) ? null : fingerprint.value().getBytes(StandardCharsets.UTF_8);
		if (text != null) {
			Assert.isTrue(text.length <= 255, "A fingerprint kept in Redis must not be longer than 255 bytes");
		}
		int fingerprintLength = (digest != null) ? DIGEST_LENGTH : 1 + text.length;
		int resultLength = (result != null) ? result.length : 0;
		byte[] record = new byte[FINGERPRINT + fingerprintLength + resultLength];
		record[0] = (byte) ((digest != null) ? state : state + TEXT);
		System.arraycopy(token, 0, record, 1, TOKEN_LENGTH);
		if (digest != null) {
			System.arraycopy(digest, 0, record, FINGERPRINT, DIGEST_LENGTH);
		}
		else {
			record[FINGERPRINT] = (byte) text.length;
			System.arraycopy(text, 0, record, FINGERPRINT + 1, text.length);
		}
		if (result != null) {
			System.arraycopy(result, 0, record, FINGERPRINT + fingerprintLength, resultLength);
		}
		return record;
	}

	/**
	 * The 32 bytes of a fingerprint that is the base64 of a SHA-256 digest, or
	 * {@code null} when it is anything else. Only a canonical encoding (the last
	 * character's two unused bits zero) counts, so the text read back is the text given.
	 */
	private static byte @Nullable [] digest(String fingerprint) {
		if (fingerprint.length() != DIGEST_TEXT_LENGTH) {
			return null;
		}
		char last = fingerprint.charAt(DIGEST_TEXT_LENGTH - 1);
		if ("AEIMQUYcgkosw048".indexOf(last) < 0) {
			return null;
		}
		try {
			return DECODER.decode(fingerprint);
		}
		catch (IllegalArgumentException ex) {
			return null;
		}
	}

	/**
	 * A placeholder of a first attempt, claimed at {@code epochSecond}; the claim script
	 * writes its last 4 bytes anew when it takes a key over.
	 */
	static byte[] inProgress(byte[] token, Fingerprint fingerprint, long epochSecond) {
		return inProgress(token, fingerprint, epochSecond, 1, 0);
	}

	/**
	 * A placeholder of attempt {@code attempt}, claimed at {@code epochSecond}, that took
	 * over an attempt claimed at {@code previousEpochSecond} (0: none, or unknown).
	 */
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

	/**
	 * A tombstone of a forced delete of the attempt {@code attempt}, claimed at
	 * {@code epochSecond}, as the scripts write it.
	 */
	static byte[] tombstone(long epochSecond, int attempt) {
		byte[] tombstone = new byte[1 + TOKEN_LENGTH];
		tombstone[0] = TOMBSTONE;
		System.arraycopy(TOMBSTONE_MARK, 0, tombstone, 1, TOMBSTONE_MARK.length);
		writeTime(tombstone, 1 + TOMBSTONE_MARK.length, epochSecond);
		tombstone[TOKEN_LENGTH] = (byte) attempt;
		return tombstone;
	}

	private static void writeTime(byte[] bytes, int offset, long epochSecond) {
		int second = (int) Math.floorMod(epochSecond, (long) CLAIM_TIME_MODULUS);
		bytes[offset] = (byte) (second >>> 16);
		bytes[offset + 1] = (byte) (second >>> 8);
		bytes[offset + 2] = (byte) second;
	}

	/**
	 * A 3-byte claim time at {@code offset}, read against {@code now}: a time up to 97
	 * days ahead of {@code now} (a claimer whose clock runs ahead) reads as {@code now},
	 * anything older as that many seconds ago.
	 */
	static Instant readTime(byte[] bytes, int offset, Instant now) {
		int second = ((bytes[offset] & 0xFF) << 16) | ((bytes[offset + 1] & 0xFF) << 8) | (bytes[offset + 2] & 0xFF);
		long ago = Math.floorMod(now.getEpochSecond() - second, (long) CLAIM_TIME_MODULUS);
		if (ago >= CLAIM_TIME_MODULUS / 2) {
			ago = 0;
		}
		return Instant.ofEpochSecond(now.getEpochSecond() - ago);
	}

	/**
	 * Whether 3 bytes of a claim time are all zero: none, or unknown. A real claim at
	 * such a second (one in 194 days) only reads as unknown.
	 */
	static boolean isNoTime(byte[] bytes, int offset) {
		return bytes.length < offset + CLAIM_TIME_LENGTH
				|| (bytes[offset] == 0 && bytes[offset + 1] == 0 && bytes[offset + 2] == 0);
	}

	static boolean isInProgress(byte[] record) {
		return record.length > 0 && (record[0] == IN_PROGRESS || record[0] == IN_PROGRESS + TEXT);
	}

	/**
	 * Whether the value is a tombstone of a forced delete rather than a record: exactly
	 * {@code D}, {@code tomb} and 4 bytes ({@link #tombstone}). Any other value that
	 * starts with {@code D} is damage, never a free key, since a claim writes over a
	 * tombstone and may run the method.
	 */
	static boolean isTombstone(byte[] record) {
		return record.length == 1 + TOKEN_LENGTH && record[0] == TOMBSTONE
				&& Arrays.equals(record, 1, 1 + TOMBSTONE_MARK.length, TOMBSTONE_MARK, 0, TOMBSTONE_MARK.length);
	}

	/**
	 * Whether the value starts with a byte that format 1 reserves for later formats (0x01
	 * to 0x1F): a newer version wrote it.
	 */
	static boolean isLaterFormat(byte[] record) {
		return record.length > 0 && record[0] >= 0x01 && record[0] <= 0x1F;
	}

	/**
	 * The lease left of a placeholder whose key has {@code pttlMillis} left
	 * ({@code PTTL}): that much less {@link #REMEMBERED}, never below 0. A key without
	 * expiry (-1) or gone (-2) has none left.
	 */
	static long leaseMillis(long pttlMillis) {
		return (pttlMillis < 0) ? 0 : Math.max(0, pttlMillis - REMEMBERED.toMillis());
	}

	/**
	 * The attempt of a placeholder.
	 */
	static int attempt(byte[] record) {
		return Math.max(1, record[record.length - CLAIM_TIME_LENGTH - 1] & 0xFF);
	}

	/**
	 * When the attempt that a placeholder took over was claimed, {@code null} for a first
	 * attempt and when unknown.
	 */
	static @Nullable Instant previousClaimedAt(byte[] record, Instant now) {
		int offset = record.length - CLAIM_TIME_LENGTH;
		if (attempt(record) == 1 || isNoTime(record, offset)) {
			return null;
		}
		return readTime(record, offset, now);
	}

	static boolean isCompleted(byte[] record) {
		return record.length > 0 && (record[0] == COMPLETED || record[0] == COMPLETED + TEXT);
	}

	/**
	 * When the key of a placeholder was claimed, read against {@code now} as
	 * {@link #readTime} does: {@code null} for a completed record.
	 */
	static @Nullable Instant claimedAt(byte[] record, Instant now) {
		return isInProgress(record) ? readTime(record, resultStart(record), now) : null;
	}

	/**
	 * What keeps {@code record} from being read as a record of this layout, or
	 * {@code null} when it reads: every offset the other methods use is checked here
	 * once, so that a value overwritten, cut short or written by something else is named
	 * rather than read past its end.
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
				// No payload has a blank fingerprint: Fingerprint refuses one.
				return "its fingerprint is blank";
			}
		}
		if (isInProgress(record) && record.length - resultStart(record) != PLACEHOLDER_END) {
			return "it is a placeholder with " + (record.length - resultStart(record))
					+ " bytes after its fingerprint, not " + PLACEHOLDER_END;
		}
		// A completed record may hold an empty result: the store's bytes are opaque, and
		// whether none is a valid outcome is the format's to judge.
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
