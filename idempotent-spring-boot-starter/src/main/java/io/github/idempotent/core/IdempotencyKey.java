package io.github.idempotent.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

import org.springframework.util.Assert;

/**
 * Key of one idempotency record in a store, scoped so that two callers or two operations
 * never share a record: {@code {prefix}:{scope}:{name}:{key}}.
 * <p>
 * The scope, the name and the key are escaped ({@code %} as {@code %25}, {@code :} as
 * {@code %3A}, and the braces as {@code %7B} and {@code %7D}), so the record key names
 * its three parts unambiguously ({@code name "a:b" + key "c"} is not {@code name "a" +
 * key "b:c"}), and a caller cannot choose the Redis Cluster slot of its record with a
 * {@code {hash tag}} in its key.
 * <p>
 * A scoped key longer than the store accepts is replaced by {@code {prefix}:#:} and the
 * SHA-256 of the whole scoped key, never truncated: truncation would let two different
 * keys collide.
 */
public record IdempotencyKey(String value) {

	public IdempotencyKey {
		Assert.hasText(value, "value must not be empty");
	}

	/**
	 * Builds the scoped key, escaping its parts so that no two different (scope, name,
	 * key) triples give the same record key.
	 */
	public static IdempotencyKey of(String prefix, String scope, String name, String key, int maxLength) {
		StringBuilder sb = new StringBuilder(prefix.length() + scope.length() + name.length() + key.length() + 8);
		sb.append(prefix).append(':');
		appendEscaped(sb, scope);
		sb.append(':');
		appendEscaped(sb, name);
		sb.append(':');
		appendEscaped(sb, key);
		if (sb.length() <= maxLength) {
			return new IdempotencyKey(sb.toString());
		}
		return new IdempotencyKey(prefix + ":#:" + sha256Hex(sb.toString()));
	}

	private static void appendEscaped(StringBuilder sb, String part) {
		for (int i = 0; i < part.length(); i++) {
			char c = part.charAt(i);
			switch (c) {
				case '%' -> sb.append("%25");
				case ':' -> sb.append("%3A");
				case '{' -> sb.append("%7B");
				case '}' -> sb.append("%7D");
				default -> sb.append(c);
			}
		}
	}

	static String sha256Hex(String text) {
		return HexFormat.of().formatHex(sha256().digest(text.getBytes(StandardCharsets.UTF_8)));
	}

	static MessageDigest sha256() {
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
