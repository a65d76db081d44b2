package io.github.idempotent.store;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Owner tokens for claims. A token fences its owner's later writes: it only needs to be
 * unique among the claims of one key, not secret, so 128 bits from a fast per-thread
 * generator do (a {@code SecureRandom} UUID costs more than the rest of a claim).
 */
public final class OwnerToken {

	private static final char[] HEX = "0123456789abcdef".toCharArray();

	private OwnerToken() {
	}

	public static String generate() {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		char[] chars = new char[32];
		fill(chars, 0, random.nextLong());
		fill(chars, 16, random.nextLong());
		return new String(chars);
	}

	private static void fill(char[] chars, int offset, long bits) {
		for (int i = 15; i >= 0; i--) {
			chars[offset + i] = HEX[(int) (bits & 0xF)];
			bits >>>= 4;
		}
	}

}
