package io.github.idempotent.web;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.json.JsonFactory;

import org.springframework.http.MediaType;
import org.springframework.util.MultiValueMap;
import org.springframework.web.util.UriUtils;

import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.store.Fingerprint;

/**
 * The fingerprint of an HTTP request as its client sent it, a JSON body canonicalised as
 * RFC 8785 but with numbers by exact decimal value rather than as doubles (docs/http.md,
 * "What the fingerprint covers").
 */
final class RequestFingerprint {

	private static final JsonFactory JSON = new JsonFactory();

	private RequestFingerprint() {
	}

	/**
	 * @param path the path as sent, percent-encoded
	 * @param route the pattern of the handler's mapping
	 * @param parameters the query parameters, and a form post's fields
	 * @param body the body as received; empty for a form post. A form's fields and parts
	 * are taken as parsed: their encoding differs from one send to the next
	 */
	static Fingerprint of(IdempotencyExecutor executor, String method, String path, @Nullable Object route,
			MultiValueMap<String, String> parameters, @Nullable MediaType contentType, byte[] body) {
		IdempotencyExecutor.FingerprintStream out = executor.fingerprintStream();
		try {
			field(out, "http-1");
			field(out, method);
			field(out, UriUtils.decode(path, StandardCharsets.UTF_8));
			field(out, (route != null) ? route.toString() : "");
			Map<String, List<String>> sorted = new TreeMap<>(parameters);
			field(out, Integer.toString(sorted.size()));
			for (Map.Entry<String, List<String>> parameter : sorted.entrySet()) {
				field(out, parameter.getKey());
				List<String> values = parameter.getValue();
				field(out, Integer.toString(values.size()));
				for (String value : values) {
					field(out, (value != null) ? value : "");
				}
			}
			byte[] canonical = (contentType != null && (MediaType.APPLICATION_JSON.isCompatibleWith(contentType)
					|| contentType.getSubtype().endsWith("+json"))) ? canonicalJson(body) : null;
			field(out, (canonical != null) ? "json" : "bytes");
			field(out, (canonical != null) ? canonical : body);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return out.fingerprint();
	}

	/**
	 * Writes a multipart request's part up to its content, which the caller writes next:
	 * the part as parsed, whatever boundary this send of the request had.
	 */
	static void part(OutputStream out, String name, @Nullable String filename, @Nullable String contentType, long size)
			throws IOException {
		for (String field : new String[] { name, String.valueOf(filename), String.valueOf(contentType) }) {
			field(out, field);
		}
		out.write((size + ":").getBytes(StandardCharsets.US_ASCII));
	}

	static void field(OutputStream out, String value) throws IOException {
		field(out, value.getBytes(StandardCharsets.UTF_8));
	}

	// Length first, so that no two requests write the same bytes.
	private static void field(OutputStream out, byte[] value) throws IOException {
		out.write((value.length + ":").getBytes(StandardCharsets.US_ASCII));
		out.write(value);
	}

	// Null when the body is not JSON.
	static byte @Nullable [] canonicalJson(byte[] body) {
		if (body.length == 0) {
			return null;
		}
		try (JsonParser parser = JSON.createParser(tools.jackson.core.ObjectReadContext.empty(), body)) {
			JsonToken token = parser.nextToken();
			if (token == null) {
				return null;
			}
			StringBuilder canonical = new StringBuilder(body.length);
			write(parser, token, canonical);
			if (parser.nextToken() != null) {
				return null;
			}
			return canonical.toString().getBytes(StandardCharsets.UTF_8);
		}
		catch (JacksonException ex) {
			return null;
		}
	}

	private static void write(JsonParser parser, JsonToken token, StringBuilder out) {
		switch (token) {
			case START_OBJECT -> {
				List<Map.Entry<String, String>> members = new ArrayList<>();
				for (JsonToken next = parser.nextToken(); next != JsonToken.END_OBJECT; next = parser.nextToken()) {
					String name = parser.currentName();
					StringBuilder member = new StringBuilder();
					string(name, member);
					write(parser, parser.nextToken(), member.append(':'));
					members.add(Map.entry(name, member.toString()));
				}
				// Stable: a name sent twice keeps both values, in the order sent.
				members.sort(Map.Entry.comparingByKey());
				out.append(members.stream().map(Map.Entry::getValue).collect(Collectors.joining(",", "{", "}")));
			}
			case START_ARRAY -> {
				out.append('[');
				boolean first = true;
				for (JsonToken next = parser.nextToken(); next != JsonToken.END_ARRAY; next = parser.nextToken()) {
					out.append(first ? "" : ",");
					first = false;
					write(parser, next, out);
				}
				out.append(']');
			}
			case VALUE_STRING -> string(parser.getString(), out);
			case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> out.append(number(parser.getDecimalValue()));
			case VALUE_TRUE -> out.append("true");
			case VALUE_FALSE -> out.append("false");
			default -> out.append("null");
		}
	}

	// ECMAScript's Number.prototype.toString, from the exact decimal value.
	static String number(BigDecimal value) {
		if (value.signum() == 0) {
			return "0";
		}
		BigDecimal stripped = value.stripTrailingZeros();
		int exponent = stripped.precision() - stripped.scale() - 1;
		if (exponent >= -6 && exponent < 21) {
			return stripped.toPlainString();
		}
		String digits = stripped.unscaledValue().abs().toString();
		StringBuilder out = new StringBuilder((stripped.signum() < 0) ? "-" : "");
		out.append(digits.charAt(0));
		if (digits.length() > 1) {
			out.append('.').append(digits, 1, digits.length());
		}
		return out.append('e').append((exponent > 0) ? "+" : "").append(exponent).toString();
	}

	private static void string(String value, StringBuilder out) {
		out.append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			// Most characters need no escape and skip the lookup.
			int escape = (c >= 0x20 && c != '"' && c != '\\') ? -1 : "\"\\\b\f\n\r\t".indexOf(c);
			if (escape >= 0) {
				out.append('\\').append("\"\\bfnrt".charAt(escape));
			}
			else if (c < 0x20) {
				out.append(String.format("\\u%04x", (int) c));
			}
			else {
				out.append(c);
			}
		}
		out.append('"');
	}

}
