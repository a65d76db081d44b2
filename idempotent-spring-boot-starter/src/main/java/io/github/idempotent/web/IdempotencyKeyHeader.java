package io.github.idempotent.web;

import org.jspecify.annotations.Nullable;

import io.github.idempotent.core.IdempotencyKeyException;

/**
 * Parses the value of an {@code Idempotency-Key} header: a bare token or an RFC 8941
 * string ({@code "abc"}, with {@code \"} and {@code \\} escapes), printable ASCII. Its
 * length is not checked here: every key, whatever its source, is checked once, by
 * {@code IdempotentCalls.checkKey} against {@code idempotent.max-key-length}.
 */
final class IdempotencyKeyHeader {

	private IdempotencyKeyHeader() {
	}

	static String parse(String headerName, String raw) {
		String value = raw.strip();
		String key = (value.length() >= 1 && value.charAt(0) == '"') ? unquote(headerName, value) : value;
		if (key.isEmpty()) {
			throw new IdempotencyKeyException(
					headerName + " header is empty; send a unique key per operation, " + "such as a UUID");
		}
		for (int i = 0; i < key.length(); i++) {
			char c = key.charAt(i);
			if (c < 0x20 || c > 0x7E) {
				throw new IdempotencyKeyException(headerName + " header must be printable ASCII; character " + (i + 1)
						+ " is not. Send a key such as a UUID");
			}
		}
		return key;
	}

	private static String unquote(String headerName, String value) {
		StringBuilder key = new StringBuilder(value.length());
		for (int i = 1; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c == '\\') {
				@Nullable Character next = (i + 1 < value.length()) ? value.charAt(i + 1) : null;
				if (next == null || (next != '"' && next != '\\')) {
					throw malformed(headerName, "a backslash may only escape \\\" or \\\\");
				}
				key.append(next);
				i++;
			}
			else if (c == '"') {
				if (i != value.length() - 1) {
					throw malformed(headerName, "text follows the closing quote");
				}
				return key.toString();
			}
			else {
				key.append(c);
			}
		}
		throw malformed(headerName, "the quoted string is not closed");
	}

	private static IdempotencyKeyException malformed(String headerName, String why) {
		return new IdempotencyKeyException(
				headerName + " header is malformed: " + why + ". Send a bare token or a quoted string like \"abc\"");
	}

}
