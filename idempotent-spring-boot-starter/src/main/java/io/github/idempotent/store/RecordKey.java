package io.github.idempotent.store;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import org.springframework.util.Assert;

/**
 * Key of one idempotency record, scoped so that two callers or two operations never share
 * a record: {@code {prefix}:{scope}:{name}:{key}}, its parts escaped so that they are
 * unambiguous and a caller cannot pick a Redis Cluster slot with a {@code {hash tag}}. A
 * key longer than the store accepts is replaced by {@code {prefix}:#:} and its SHA-256,
 * never truncated; a long operation name is shortened to its readable end, {@code ~} and
 * 8 hex digits of its SHA-256 (docs/stores.md).
 */
public record RecordKey(String value) {

	/** Longest operation name kept as it is in a record key. */
	public static final int MAX_NAME_LENGTH = 32;

	private static final int READABLE_LENGTH = MAX_NAME_LENGTH - 9;

	private static final int MAX_CACHED_NAMES = 4096;

	// Operation names are few and fixed, each hashed once; the bound guards against a
	// caller that passes a new name on every call.
	private static final ConcurrentMap<String, String> SHORT_NAMES = new ConcurrentHashMap<>();

	public RecordKey {
		Assert.hasText(value, "value must not be empty");
	}

	/** Builds the scoped key, escaping its parts. */
	public static RecordKey of(String prefix, String scope, String name, String key, int maxLength) {
		StringBuilder sb = new StringBuilder(prefix.length() + scope.length() + name.length() + key.length() + 8);
		sb.append(prefix).append(':');
		appendEscaped(sb, scope, false);
		appendName(sb.append(':'), name).append(':');
		appendEscaped(sb, key, false);
		if (sb.length() <= maxLength) {
			return new RecordKey(sb.toString());
		}
		return new RecordKey(prefix + ":#:" + sha256Hex(sb.toString()));
	}

	/** {@code name} as it appears in a record key: escaped, and shortened if long. */
	public static String nameInKey(String name) {
		return appendName(new StringBuilder(name.length() + 8), name).toString();
	}

	private static StringBuilder appendName(StringBuilder sb, String name) {
		if (name.length() > MAX_NAME_LENGTH) {
			return sb.append(shortName(name));
		}
		appendEscaped(sb, name, true);
		return sb;
	}

	static String shortName(String name) {
		String cached = SHORT_NAMES.get(name);
		if (cached != null) {
			return cached;
		}
		// SimpleClass.method of a default name, else the name; then its end.
		int parameters = name.indexOf('(');
		String readable = (parameters >= 0) ? name.substring(0, parameters) : name;
		int hash = readable.indexOf('#');
		if (hash >= 0) {
			String type = readable.substring(0, hash);
			readable = type.substring(type.lastIndexOf('.') + 1) + "." + readable.substring(hash + 1);
		}
		StringBuilder sb = new StringBuilder(MAX_NAME_LENGTH + 16);
		appendEscaped(sb, readable.substring(Math.max(0, readable.length() - READABLE_LENGTH)), true);
		String shortName = sb.append('~').append(sha256Hex(name), 0, 8).toString();
		if (SHORT_NAMES.size() < MAX_CACHED_NAMES) {
			SHORT_NAMES.put(name, shortName);
		}
		return shortName;
	}

	private static void appendEscaped(StringBuilder sb, String part, boolean name) {
		for (int i = 0; i < part.length(); i++) {
			char c = part.charAt(i);
			switch (c) {
				case '%' -> sb.append("%25");
				case ':' -> sb.append("%3A");
				case '{' -> sb.append("%7B");
				case '}' -> sb.append("%7D");
				case '~' -> sb.append(name ? "%7E" : "~");
				default -> sb.append(c);
			}
		}
	}

	static String sha256Hex(String text) {
		return HexFormat.of().formatHex(sha256().digest(text.getBytes(StandardCharsets.UTF_8)));
	}

	/** A new SHA-256 digest. */
	public static MessageDigest sha256() {
		try {
			return MessageDigest.getInstance("SHA-256");
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required by every Java platform", ex);
		}
	}

	@Override
	public String toString() {
		return this.value;
	}

}
