package io.github.idempotent.actuate;

import java.util.Collection;

import org.jspecify.annotations.Nullable;

import io.github.idempotent.store.RecordKey;

/** The scope, operation and client key of a record key; a hashed one shows none. */
record KeyParts(@Nullable String operation, @Nullable String scope, @Nullable String key) {

	private static final KeyParts UNKNOWN = new KeyParts(null, null, null);

	static KeyParts parse(String prefix, String storedKey, Collection<String> operationNames) {
		if (!storedKey.startsWith(prefix + ":")) {
			return UNKNOWN;
		}
		String[] parts = storedKey.substring(prefix.length() + 1).split(":", -1);
		if (parts.length != 3) {
			return UNKNOWN;
		}
		String operation = unescape(parts[1]);
		for (String name : operationNames) {
			if (RecordKey.nameInKey(name).equals(parts[1])) {
				operation = name;
				break;
			}
		}
		return new KeyParts(operation, unescape(parts[0]), unescape(parts[2]));
	}

	/** Undoes the escaping of {@link RecordKey#of}. */
	private static String unescape(String part) {
		if (part.indexOf('%') < 0) {
			return part;
		}
		return part.replace("%3A", ":").replace("%7B", "{").replace("%7D", "}").replace("%7E", "~").replace("%25", "%");
	}

}
