package io.github.idempotent.web;

import java.util.List;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import io.github.idempotent.core.IdempotentOperation;
import io.github.idempotent.core.IdempotencyKeyException;

/**
 * Parses an {@code Idempotency-Key} header: a bare token or an RFC 8941 string
 * ({@code "abc"}), printable ASCII. Its length is checked with every other key's.
 */
final class IdempotencyKeyHeader {

	private IdempotencyKeyHeader() {
	}

	// Null when the request has none and the operation does not require one.
	static @Nullable String read(String headerName, IdempotentOperation operation,
			Function<String, List<String>> reader) {
		String key = parse(headerName, lines(headerName, reader));
		if (key == null && operation.required() && operation.key() == null) {
			throw new IdempotencyKeyException("Idempotency key is required: send it in the " + headerName + " header");
		}
		return key;
	}

	static @Nullable String parse(String headerName, List<String> values) {
		if (values.isEmpty()) {
			return null;
		}
		if (values.size() > 1) {
			throw new IdempotencyKeyException(
					"More than one " + headerName + " header was sent; send exactly one key per request");
		}
		return parse(headerName, values.get(0));
	}

	// A value Spring Security's firewall refuses on reading is the caller's 400.
	private static List<String> lines(String headerName, Function<String, List<String>> reader) {
		try {
			return reader.apply(headerName);
		}
		catch (RuntimeException ex) {
			for (Class<?> type = ex.getClass(); type != null; type = type.getSuperclass()) {
				if (type.getName().startsWith("org.springframework.security.web.")
						&& type.getSimpleName().endsWith("RejectedException")) {
					throw new IdempotencyKeyException(
							headerName + " header has characters this server does not accept; "
									+ "send printable ASCII, such as a UUID",
							"The server's firewall refused the " + headerName + " header: " + ex.getMessage());
				}
			}
			throw ex;
		}
	}

	static String parse(String headerName, String raw) {
		String value = raw.strip();
		boolean quoted = value.length() >= 1 && value.charAt(0) == '"';
		String key = quoted ? unquote(headerName, value) : value;
		if (!quoted && key.indexOf(',') >= 0) {
			throw new IdempotencyKeyException(headerName + " header holds a list of keys; send exactly one key per "
					+ "request (quote a key that contains a comma: \"a,b\")");
		}
		if (key.isEmpty()) {
			throw new IdempotencyKeyException(
					headerName + " header is empty; send a unique key per operation, such as a UUID");
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
				if (i + 1 == value.length() || "\"\\".indexOf(value.charAt(i + 1)) < 0) {
					throw malformed(headerName, "a backslash may only escape \\\" or \\\\");
				}
				key.append(value.charAt(++i));
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
