package io.github.idempotent.store;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

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
 * <p>
 * An operation name longer than {@value #MAX_NAME_LENGTH} characters (every default name:
 * {@code com.shop.PaymentController#pay(com.shop.PaymentRequest)}) is kept short: its
 * readable end ({@code PaymentController.pay}, at most 23 characters), {@code ~}, and the
 * first 8 hex digits of the SHA-256 of the whole name, as in
 * {@code idempotent:_:PaymentController.pay~3f9a1c2b:<key>}. The readable part already
 * separates all but overloads and same-named classes of different packages; the 32 bits
 * of hash separate those, with odds of a collision among 100 such names of about one in a
 * million. A {@code ~} in a name is escaped ({@code %7E}), so no name of up to
 * {@value #MAX_NAME_LENGTH} characters can spell a shortened one. A record costs memory
 * per byte of its key, once per record: about 45 bytes saved on each.
 */
public record RecordKey(String value) {

	/**
	 * Longest operation name kept as it is in a record key.
	 */
	public static final int MAX_NAME_LENGTH = 32;

	private static final int READABLE_LENGTH = MAX_NAME_LENGTH - 9;

	private static final int MAX_CACHED_NAMES = 4096;

	/**
	 * Escaped short form of each long name: operation names are few and fixed at
	 * start-up, so each is hashed once; the bound only guards against a caller that
	 * passes a new name on every call.
	 */
	private static final ConcurrentMap<String, String> SHORT_NAMES = new ConcurrentHashMap<>();

	public RecordKey {
		Assert.hasText(value, "value must not be empty");
	}

	/**
	 * Builds the scoped key, escaping its parts so that no two different (scope, name,
	 * key) triples give the same record key.
	 */
	public static RecordKey of(String prefix, String scope, String name, String key, int maxLength) {
		StringBuilder sb = new StringBuilder(prefix.length() + scope.length() + name.length() + key.length() + 8);
		sb.append(prefix).append(':');
		appendEscaped(sb, scope, false);
		sb.append(':');
		if (name.length() > MAX_NAME_LENGTH) {
			sb.append(shortName(name));
		}
		else {
			appendEscaped(sb, name, true);
		}
		sb.append(':');
		appendEscaped(sb, key, false);
		if (sb.length() <= maxLength) {
			return new RecordKey(sb.toString());
		}
		return new RecordKey(prefix + ":#:" + sha256Hex(sb.toString()));
	}

	/**
	 * How {@code name} appears in a record key: escaped, and shortened if longer than
	 * {@link #MAX_NAME_LENGTH}.
	 */
	public static String nameInKey(String name) {
		if (name.length() > MAX_NAME_LENGTH) {
			return shortName(name);
		}
		StringBuilder sb = new StringBuilder(name.length() + 8);
		appendEscaped(sb, name, true);
		return sb.toString();
	}

	/**
	 * The escaped short form of a name longer than {@link #MAX_NAME_LENGTH}.
	 */
	static String shortName(String name) {
		String cached = SHORT_NAMES.get(name);
		if (cached != null) {
			return cached;
		}
		StringBuilder sb = new StringBuilder(MAX_NAME_LENGTH + 16);
		appendEscaped(sb, readablePart(name), true);
		String shortName = sb.append('~').append(sha256Hex(name), 0, 8).toString();
		if (SHORT_NAMES.size() < MAX_CACHED_NAMES) {
			SHORT_NAMES.put(name, shortName);
		}
		return shortName;
	}

	/**
	 * {@code SimpleClass.method} of a default name
	 * ({@code pkg.SimpleClass#method(types)}), else the name; then its last
	 * {@value #READABLE_LENGTH} characters, where names differ most.
	 */
	private static String readablePart(String name) {
		int parameters = name.indexOf('(');
		String readable = (parameters >= 0) ? name.substring(0, parameters) : name;
		int hash = readable.indexOf('#');
		if (hash >= 0) {
			String type = readable.substring(0, hash);
			readable = type.substring(type.lastIndexOf('.') + 1) + "." + readable.substring(hash + 1);
		}
		return (readable.length() > READABLE_LENGTH) ? readable.substring(readable.length() - READABLE_LENGTH)
				: readable;
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

	/**
	 * A new SHA-256 digest.
	 */
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
