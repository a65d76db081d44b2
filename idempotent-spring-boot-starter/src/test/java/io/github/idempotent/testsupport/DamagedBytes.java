package io.github.idempotent.testsupport;

import java.util.Arrays;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/**
 * A value a store held, damaged one way, for the property tests of the record readers:
 * cut short, one byte changed, bytes added at the end, or random bytes of its length.
 */
public final class DamagedBytes {

	private DamagedBytes() {
	}

	public static Arbitrary<byte[]> of(byte[] written) {
		Arbitrary<Integer> positions = Arbitraries.integers().between(0, Math.max(0, written.length - 1));
		Arbitrary<byte[]> cut = positions.map((end) -> Arrays.copyOf(written, end));
		Arbitrary<byte[]> changed = Combinators.combine(positions, Arbitraries.bytes()).as((at, value) -> {
			byte[] copy = written.clone();
			if (copy.length > 0) {
				copy[at] = value;
			}
			return copy;
		});
		Arbitrary<byte[]> grown = Arbitraries.bytes()
			.array(byte[].class)
			.ofMinSize(1)
			.ofMaxSize(16)
			.map((more) -> concat(written, more));
		Arbitrary<byte[]> random = Arbitraries.bytes().array(byte[].class).ofSize(written.length);
		return Arbitraries.oneOf(cut, changed, grown, random);
	}

	public static byte[] concat(byte[] first, byte[] second) {
		byte[] all = Arrays.copyOf(first, first.length + second.length);
		System.arraycopy(second, 0, all, first.length, second.length);
		return all;
	}

}
