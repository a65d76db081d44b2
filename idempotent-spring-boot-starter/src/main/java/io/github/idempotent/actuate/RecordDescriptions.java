package io.github.idempotent.actuate;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;

import org.jspecify.annotations.Nullable;

import org.springframework.util.MimeType;
import org.springframework.util.MimeTypeUtils;

import io.github.idempotent.actuate.IdempotencyEndpoint.RecordDescriptor;
import io.github.idempotent.actuate.IdempotencyEndpoint.ResponseDescriptor;
import io.github.idempotent.core.RecordedResponse;
import io.github.idempotent.core.ResultCompression;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.RecordKey;

/** How the endpoint shows a record. */
final class RecordDescriptions {

	/** Largest stored result the endpoint decompresses to show. */
	private static final long MAX_SHOWN_SIZE = 16 * 1024 * 1024;

	private final String keyPrefix;

	private final OperationNames operationNames;

	RecordDescriptions(String keyPrefix, OperationNames operationNames) {
		this.keyPrefix = keyPrefix;
		this.operationNames = operationNames;
	}

	RecordDescriptor describe(IdempotencyRecord record, Instant now, boolean showResult) {
		KeyParts parts = KeyParts.parse(this.keyPrefix, record.key().value(), this.operationNames.known());
		Duration age = record.age(now);
		Duration expiresIn = record.expiresIn();
		String result = null;
		String resultBase64 = null;
		Integer resultSize = null;
		ResponseDescriptor response = null;
		String reason = record.damage();
		if (record.result() != null) {
			resultSize = record.result().size();
			if (showResult) {
				try {
					response = response(RecordedResponse.read(record.result(), MAX_SHOWN_SIZE));
					if (response == null) {
						byte[] bytes = ResultCompression.inflatedValue(record.result(), MAX_SHOWN_SIZE);
						if (bytes == null) {
							bytes = record.result().bytes();
							// A value's JSON without its marker, as a compressed one is.
							bytes = (bytes.length > 0 && bytes[0] == 'V') ? Arrays.copyOfRange(bytes, 1, bytes.length)
									: bytes;
						}
						result = decode(bytes, StandardCharsets.UTF_8);
						resultBase64 = (result != null) ? null : Base64.getEncoder().encodeToString(bytes);
					}
				}
				catch (IllegalArgumentException ex) {
					reason = "its stored result cannot be read: " + ex.getMessage();
				}
			}
		}
		boolean inProgress = record.state() == IdempotencyRecord.State.IN_PROGRESS;
		return new RecordDescriptor(parts.operation(), parts.scope(), parts.key(), record.key().value(),
				record.state().name(), (record.claimedAt() != null) ? record.claimedAt().toString() : null,
				(age != null) ? age.withNanos(0).toString() : null,
				(inProgress && expiresIn != null) ? expiresIn.toString() : null,
				(!inProgress && expiresIn != null) ? expiresIn.toString() : null,
				(showResult && record.fingerprint() != null) ? hash(record.fingerprint().value()) : null, resultSize,
				result, resultBase64, response, reason);
	}

	/**
	 * Hashed again: records can be compared, and a fingerprint that is no digest reveals
	 * nothing. Still shown only as {@code show-values} allows: a hash lets a reader test
	 * guesses of a low-entropy payload.
	 */
	private static String hash(String fingerprint) {
		byte[] digest = RecordKey.sha256().digest(fingerprint.getBytes(StandardCharsets.UTF_8));
		return "sha256:" + HexFormat.of().formatHex(digest, 0, 8);
	}

	private static @Nullable ResponseDescriptor response(@Nullable RecordedResponse response) {
		if (response == null) {
			return null;
		}
		String text = text(response.body(), response.contentType());
		return new ResponseDescriptor(response.status(), response.headers(), text,
				(text != null) ? null : Base64.getEncoder().encodeToString(response.body()));
	}

	/** The body as text, when its content type is text and it decodes in its charset. */
	private static @Nullable String text(byte[] body, @Nullable String contentType) {
		try {
			MimeType type = MimeTypeUtils.parseMimeType(contentType);
			String subtype = type.getSubtype();
			boolean text = type.getType().equals("text") || subtype.equals("json") || subtype.endsWith("+json")
					|| subtype.equals("xml") || subtype.endsWith("+xml");
			Charset charset = type.getCharset();
			return text ? decode(body, (charset != null) ? charset : StandardCharsets.UTF_8) : null;
		}
		catch (IllegalArgumentException ex) {
			return null;
		}
	}

	private static @Nullable String decode(byte[] bytes, Charset charset) {
		try {
			return charset.newDecoder()
				.onMalformedInput(CodingErrorAction.REPORT)
				.onUnmappableCharacter(CodingErrorAction.REPORT)
				.decode(ByteBuffer.wrap(bytes))
				.toString();
		}
		catch (CharacterCodingException ex) {
			return null;
		}
	}

}
