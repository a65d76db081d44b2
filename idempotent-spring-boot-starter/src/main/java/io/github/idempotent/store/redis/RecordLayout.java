package io.github.idempotent.store.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

import io.github.idempotent.store.Fingerprint;

/**
 * The bytes of a Redis record: one string value per record, rather than a hash, because a
 * hash leaves Redis's compact encoding as soon as one field passes 64 bytes
 * ({@code hash-max-listpack-value}) and then costs about 500 bytes more; a string costs
 * its bytes plus a 16-byte object header. Layout:
 * <ul>
 * <li>byte 0: the state, {@code P} in progress or {@code C} completed, when the
 * fingerprint is the URL-safe base64 of a SHA-256 digest (as {@code Fingerprinter} makes
 * them), kept as its 32 raw bytes instead of 43 characters; {@code p} or {@code c} for
 * any other fingerprint, kept as text;</li>
 * <li>bytes 1-8: the owner's token ({@link #token});</li>
 * <li>then the fingerprint: 32 bytes, or one length byte and up to 255 bytes of UTF-8
 * text;</li>
 * <li>then, in a completed record, the result, to the end; in an in-progress record, the
 * claim time ({@link #inProgress}), or nothing in a record of an earlier version.</li>
 * </ul>
 * A tombstone, left by an operator's forced delete of a record in progress, is byte 0
 * {@code D} and the 8 bytes of the deleted owner's token, nothing else: it is no record
 * (a claim takes it as free), it only fences that owner's renewals and completion. The
 * Lua scripts read only the state byte and the token, at fixed offsets; everything else
 * is built and parsed here, off the server.
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
	 * Bytes of the claim time after the fingerprint of an in-progress record: the
	 * claiming instance's epoch second modulo 2^24 (194 days). Three bytes because an
	 * in-progress record with a digest fingerprint is then 44 bytes, the longest string
	 * Redis 7 keeps inside its object header (embstr): a fourth byte would cost 16 bytes
	 * of memory per record (docs/benchmarks.md, record sizes).
	 */
	private static final int CLAIM_TIME_LENGTH = 3;

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
	 * An in-progress record that carries its claim time, {@code epochSecond}.
	 */
	static byte[] inProgress(byte[] token, Fingerprint fingerprint, long epochSecond) {
		int second = (int) Math.floorMod(epochSecond, (long) CLAIM_TIME_MODULUS);
		byte[] time = { (byte) (second >>> 16), (byte) (second >>> 8), (byte) second };
		return record(IN_PROGRESS, token, fingerprint, time);
	}

	static boolean isInProgress(byte[] record) {
		return record.length > 0 && (record[0] == IN_PROGRESS || record[0] == IN_PROGRESS + TEXT);
	}

	/**
	 * Whether the value is a tombstone of a forced delete rather than a record: exactly
	 * {@code D} and a token. Any other value that starts with {@code D} is damage, never
	 * a free key, since a claim writes over a tombstone and may run the method.
	 */
	static boolean isTombstone(byte[] record) {
		return record.length == 1 + TOKEN_LENGTH && record[0] == TOMBSTONE;
	}

	static boolean isCompleted(byte[] record) {
		return record.length > 0 && (record[0] == COMPLETED || record[0] == COMPLETED + TEXT);
	}

	/**
	 * When the key of an in-progress record was claimed, read against {@code now}:
	 * {@code null} for a completed record and for one written without a claim time. A
	 * claim time up to 97 days ahead of {@code now} (a claimer whose clock runs ahead)
	 * reads as {@code now}, anything older as that many seconds ago.
	 */
	static @Nullable Instant claimedAt(byte[] record, Instant now) {
		int start = resultStart(record);
		if (!isInProgress(record) || record.length - start != CLAIM_TIME_LENGTH) {
			return null;
		}
		int second = ((record[start] & 0xFF) << 16) | ((record[start + 1] & 0xFF) << 8) | (record[start + 2] & 0xFF);
		long ago = Math.floorMod(now.getEpochSecond() - second, (long) CLAIM_TIME_MODULUS);
		if (ago >= CLAIM_TIME_MODULUS / 2) {
			ago = 0;
		}
		return Instant.ofEpochSecond(now.getEpochSecond() - ago);
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
