package io.github.idempotent.testsupport;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;
import java.util.stream.LongStream;

/**
 * The values of one try of a property ({@link Tries}), drawn from the try's seed. Every
 * bounded draw is an edge one time in eight: the bounds, the values next to them, 0, 1
 * and -1 where they are in range; so strings, arrays and lists are often empty, one long
 * or as long as allowed, and numbers sit at their limits. Half the lengths are short (at
 * most 4 above the minimum): a parser often stops at its first bad unit.
 */
public final class Draw {

	/**
	 * Characters that parsers and encoders get wrong: NUL, controls, blanks, a quote, a
	 * backslash, DEL, NEL, a no-break space, a two-byte letter, a line separator, a BOM,
	 * lone surrogates, U+FFFF.
	 */
	private static final String EDGE_CHARS = "\u0000\t\n\r \"\\\u001f\u007f\u0085\u00a0\u00e9\u2028\ufeff\ud800\udfff\uffff";

	private static final byte[] EDGE_BYTES = EDGE_CHARS.getBytes(StandardCharsets.UTF_8);

	private final RandomGenerator random;

	Draw(RandomGenerator random) {
		this.random = random;
	}

	/**
	 * The characters from {@code first} to {@code last}, as an alphabet.
	 */
	public static String range(char first, char last) {
		StringBuilder alphabet = new StringBuilder();
		for (int c = first; c <= last; c++) {
			alphabet.append((char) c);
		}
		return alphabet.toString();
	}

	public long between(long min, long max) {
		if (this.random.nextInt(8) == 0) {
			long[] edges = LongStream.of(min, max, min + 1, max - 1, 0, 1, -1)
				.filter((edge) -> edge >= min && edge <= max)
				.toArray();
			return edges[this.random.nextInt(edges.length)];
		}
		if (max < Long.MAX_VALUE) {
			return this.random.nextLong(min, max + 1);
		}
		return (min == Long.MIN_VALUE) ? this.random.nextLong() : this.random.nextLong(min - 1, max) + 1;
	}

	public int between(int min, int max) {
		return (int) between((long) min, (long) max);
	}

	/**
	 * True one time in {@code times}.
	 */
	public boolean oneIn(int times) {
		return this.random.nextInt(times) == 0;
	}

	@SafeVarargs
	public final <T> T choice(T... values) {
		return values[this.random.nextInt(values.length)];
	}

	/**
	 * One of the values; a list, as a set's order may change from one JVM to the next.
	 */
	public <T> T choice(List<? extends T> values) {
		return values.get(this.random.nextInt(values.size()));
	}

	/**
	 * A value from one of the generators, each as likely.
	 */
	@SafeVarargs
	public final <T> T oneOf(Supplier<? extends T>... generators) {
		return choice(generators).get();
	}

	public <T> List<T> list(int minSize, int maxSize, Supplier<? extends T> element) {
		int size = length(minSize, maxSize);
		List<T> list = new ArrayList<>(size);
		for (int i = 0; i < size; i++) {
			list.add(element.get());
		}
		return list;
	}

	/**
	 * A string of characters from the alphabet (a lone surrogate in it is drawn alone).
	 */
	public String string(String alphabet, int minLength, int maxLength) {
		char[] text = new char[length(minLength, maxLength)];
		for (int i = 0; i < text.length; i++) {
			text[i] = alphabet.charAt(this.random.nextInt(alphabet.length()));
		}
		return new String(text);
	}

	/**
	 * A string of any UTF-16 units, its length counted in units: printable ASCII, the
	 * {@link #EDGE_CHARS}, any unit (lone surrogates too) and characters beyond the BMP,
	 * each a quarter of the time.
	 */
	public String string(int minLength, int maxLength) {
		int length = length(minLength, maxLength);
		StringBuilder text = new StringBuilder(length);
		while (text.length() < length) {
			switch (this.random.nextInt(4)) {
				case 0 -> text.append((char) this.random.nextInt(' ', '\u007f'));
				case 1 -> text.append(EDGE_CHARS.charAt(this.random.nextInt(EDGE_CHARS.length())));
				case 2 -> text.append((char) this.random.nextInt(Character.MAX_VALUE + 1));
				default -> text.appendCodePoint((text.length() + 2 <= length)
						? this.random.nextInt(Character.MIN_SUPPLEMENTARY_CODE_POINT, Character.MAX_CODE_POINT + 1)
						: this.random.nextInt(' ', '\u007f'));
			}
		}
		return text.toString();
	}

	public byte[] bytes(int minLength, int maxLength) {
		byte[] bytes = new byte[length(minLength, maxLength)];
		fill(bytes, 0);
		return bytes;
	}

	/**
	 * {@code written} (a value a store held) damaged one way: cut short, one byte
	 * changed, 1 to 16 bytes added at the end, or random bytes of its length.
	 */
	public byte[] damaged(byte[] written) {
		return oneOf(() -> Arrays.copyOf(written, between(0, Math.max(0, written.length - 1))), () -> {
			byte[] changed = written.clone();
			if (changed.length > 0) {
				changed[between(0, changed.length - 1)] = anyByte();
			}
			return changed;
		}, () -> fill(Arrays.copyOf(written, written.length + between(1, 16)), written.length),
				() -> bytes(written.length, written.length));
	}

	private int length(int min, int max) {
		return between(min, oneIn(2) ? Math.min(max, min + 4) : max);
	}

	/**
	 * Any byte; one in eight a byte of an {@link #EDGE_CHARS} character in UTF-8 (a
	 * blank, a quote, a lead or continuation byte), as text in a record is damaged.
	 */
	private byte anyByte() {
		return oneIn(8) ? EDGE_BYTES[this.random.nextInt(EDGE_BYTES.length)]
				: (byte) between(Byte.MIN_VALUE, Byte.MAX_VALUE);
	}

	private byte[] fill(byte[] bytes, int from) {
		for (int i = from; i < bytes.length; i++) {
			bytes[i] = anyByte();
		}
		return bytes;
	}

}
