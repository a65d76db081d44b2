package io.github.idempotent.actuate;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.util.MimeType;
import org.springframework.util.MimeTypeUtils;

import io.github.idempotent.actuate.IdempotencyEndpoint.RecordDescriptor;
import io.github.idempotent.actuate.IdempotencyEndpoint.ResponseDescriptor;
import io.github.idempotent.core.RecordedResponse;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.RecordKey;

/** How the endpoint names and shows records. */
final class RecordDescriptions {

	/** Largest stored result the endpoint decompresses to show. */
	private static final long MAX_SHOWN_SIZE = 16 * 1024 * 1024;

	private final String keyPrefix;

	private final Supplier<Set<String>> operationNames;

	RecordDescriptions(String keyPrefix, Supplier<Set<String>> operationNames) {
		this.keyPrefix = keyPrefix;
		this.operationNames = operationNames;
	}

	// A known name as it is; else the known name whose record-key form it is; else the
	// one known default name it abbreviates; else the name as given.
	String resolveOperation(String operation) {
		Collection<String> known = this.operationNames.get();
		if (known.contains(operation)) {
			return operation;
		}
		List<String> matches = new ArrayList<>();
		for (String name : known) {
			if (RecordKey.nameInKey(name).equals(operation) || abbreviates(operation, name)) {
				matches.add(name);
			}
		}
		if (matches.size() > 1) {
			throw new InvalidEndpointRequestException("Operation '" + operation + "' is ambiguous: " + matches,
					"Operation '" + operation + "' names more than one operation: " + matches + "; give the full name");
		}
		return matches.isEmpty() ? operation : matches.get(0);
	}

	// SimpleClass.method or SimpleClass#method of pkg.SimpleClass#method(types).
	private static boolean abbreviates(String operation, String name) {
		int hash = name.indexOf('#');
		int parameters = name.indexOf('(', hash + 1);
		if (hash < 0 || parameters < 0) {
			return false;
		}
		String type = name.substring(0, hash);
		String simple = type.substring(type.lastIndexOf('.') + 1);
		String method = name.substring(hash + 1, parameters);
		return operation.equals(simple + "." + method) || operation.equals(simple + "#" + method);
	}

	RecordDescriptor describe(IdempotencyRecord record, Instant now, boolean showResult) {
		// The scope, operation and client key of the record key; a hashed one shows none.
		String storedKey = record.key().value();
		String[] parts = storedKey.startsWith(this.keyPrefix + ":")
				? storedKey.substring(this.keyPrefix.length() + 1).split(":", -1) : new String[0];
		boolean shown = parts.length == 3;
		String operation = shown ? unescape(parts[1]) : null;
		for (String name : this.operationNames.get()) {
			if (shown && RecordKey.nameInKey(name).equals(parts[1])) {
				operation = name;
				break;
			}
		}
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
					RecordedResponse recorded = RecordedResponse.read(record.result(), MAX_SHOWN_SIZE);
					if (recorded != null) {
						String text = text(recorded.body(), recorded.contentType());
						response = new ResponseDescriptor(recorded.status(), recorded.headers(), text,
								(text != null) ? null : Base64.getEncoder().encodeToString(recorded.body()));
					}
					else {
						byte[] bytes = RecordedResponse.readOther(record.result(), MAX_SHOWN_SIZE);
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
		return new RecordDescriptor(operation, shown ? unescape(parts[0]) : null, shown ? unescape(parts[2]) : null,
				storedKey, record.state().name(), (record.claimedAt() != null) ? record.claimedAt().toString() : null,
				(age != null) ? age.withNanos(0).toString() : null,
				(inProgress && expiresIn != null) ? expiresIn.toString() : null,
				(!inProgress && expiresIn != null) ? expiresIn.toString() : null,
				(showResult && record.fingerprint() != null) ? hash(record.fingerprint().value()) : null, resultSize,
				result, resultBase64, response, reason);
	}

	/** Undoes the escaping of {@link RecordKey#of}. */
	private static String unescape(String part) {
		if (part.indexOf('%') < 0) {
			return part;
		}
		return part.replace("%3A", ":").replace("%7B", "{").replace("%7D", "}").replace("%7E", "~").replace("%25", "%");
	}

	// Hashed again: records can be compared, and a fingerprint that is no digest reveals
	// nothing. Still shown only as show-values allows: a hash lets a reader test guesses
	// of a low-entropy payload.
	private static String hash(String fingerprint) {
		byte[] digest = RecordKey.sha256().digest(fingerprint.getBytes(StandardCharsets.UTF_8));
		return "sha256:" + HexFormat.of().formatHex(digest, 0, 8);
	}

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
