package io.github.idempotent.store;

import java.time.Instant;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

import org.jspecify.annotations.Nullable;

/**
 * Owner tokens for claims: unique among the claims of one key, not secret, so 128 bits
 * from a fast per-thread generator.
 */
public final class OwnerToken {

	private OwnerToken() {
	}

	public static String generate() {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		return HexFormat.of().toHexDigits(random.nextLong()) + HexFormat.of().toHexDigits(random.nextLong());
	}

	/**
	 * A token that also tells when it was claimed ({@link #claimedAt}), so that a store
	 * keeps the claim time in no column of its own.
	 */
	public static String generate(Instant claimedAt) {
		return generate() + "-" + Long.toHexString(claimedAt.getEpochSecond());
	}

	/**
	 * When a token of {@link #generate(Instant)} was claimed; {@code null} for any other.
	 */
	public static @Nullable Instant claimedAt(String token) {
		int dash = token.lastIndexOf('-');
		if (dash < 0 || dash == token.length() - 1 || token.length() - dash > 17) {
			return null;
		}
		try {
			return Instant.ofEpochSecond(Long.parseLong(token, dash + 1, token.length(), 16));
		}
		catch (RuntimeException ex) {
			return null;
		}
	}

}
