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
 * A scoped key longer than the store accepts is replaced by {@code {prefix}:#:} and the
 * SHA-256 of the whole scoped key, never truncated: truncation would let two different
 * keys collide.
 */
public record IdempotencyKey(String value) {

	public IdempotencyKey {
		Assert.hasText(value, "value must not be empty");
	}

	/**
	 * Builds the scoped key. The scope is escaped, so that no choice of scope can produce
	 * the same record key as another scope with another name (the name and the key are
	 * fixed by position: the name comes from code and the key is last).
	 */
	public static IdempotencyKey of(String prefix, String scope, String name, String key, int maxLength) {
		StringBuilder sb = new StringBuilder(prefix.length() + scope.length() + name.length() + key.length() + 3);
		sb.append(prefix).append(':');
		appendEscaped(sb, scope);
		sb.append(':').append(name).append(':').append(key);
		if (sb.length() <= maxLength) {
			return new IdempotencyKey(sb.toString());
		}
		return new IdempotencyKey(prefix + ":#:" + sha256Hex(sb.toString()));
	}

	private static void appendEscaped(StringBuilder sb, String scope) {
		for (int i = 0; i < scope.length(); i++) {
			char c = scope.charAt(i);
			switch (c) {
				case '%' -> sb.append("%25");
				case ':' -> sb.append("%3A");
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
