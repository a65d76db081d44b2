package io.github.idempotent.testsupport;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The property runner the property tests rely on: a failure names a seed that replays it,
 * the input shrinks to the smallest that still fails, and the edges are drawn.
 */
class TriesTests {

	@Test
	void aFailureNamesTheSeedThatReplaysItAndTheSmallestFailingInput() {
		List<byte[]> drawn = new ArrayList<>();
		AssertionError failure = catchThrowableOfType(AssertionError.class,
				() -> Tries.check(new SplittableRandom().nextLong(), 500, (draw) -> {
					byte[] bytes = draw.bytes(0, 64);
					drawn.add(bytes);
					return bytes;
				}, (bytes) -> assertThat(bytes).doesNotContain((byte) 7)));
		assertThat(failure).hasMessageContaining("smallest failing input (").hasMessageContaining("): [7] (1 bytes)");
		Matcher seed = Pattern.compile("-Didempotent\\.seed=(-?\\d+)").matcher(failure.getMessage());
		assertThat(seed.find()).isTrue();
		byte[] failing = drawn.get(drawn.size() - 1);

		List<byte[]> replayed = new ArrayList<>();
		assertThatThrownBy(() -> Tries.check(Long.parseLong(seed.group(1)), 500, (draw) -> {
			byte[] bytes = draw.bytes(0, 64);
			replayed.add(bytes);
			return bytes;
		}, (bytes) -> assertThat(bytes).doesNotContain((byte) 7))).hasMessageContaining("failed at try 1 of 500");
		assertThat(replayed).hasSize(1);
		assertThat(replayed.get(0)).isEqualTo(failing);
	}

	@Test
	void aStringShrinksWithinTheFailureItFound() {
		AssertionError failure = catchThrowableOfType(AssertionError.class,
				() -> Tries.check(1, 500, (draw) -> draw.string("ab\"", 1, 40), (text) -> {
					if (text.isEmpty()) {
						throw new IllegalArgumentException("another failure, not the one found");
					}
					assertThat(text).doesNotContain("\"");
				}));
		assertThat(failure).hasMessageContaining("smallest failing input (")
			.hasMessageContaining("): \"\\\"\" (1 chars)");
	}

	@Test
	void theEdgesAreDrawn() {
		Draw draw = new Draw(new SplittableRandom());
		Set<Integer> lengths = new HashSet<>();
		Set<Long> numbers = new HashSet<>();
		for (int i = 0; i < 2000; i++) {
			lengths.add(draw.string(0, 24).length());
			lengths.add(draw.bytes(0, 24).length);
			numbers.add(draw.between(Long.MIN_VALUE, Long.MAX_VALUE));
		}
		assertThat(lengths).contains(0, 1, 23, 24);
		assertThat(numbers).contains(Long.MIN_VALUE, -1L, 0L, 1L, Long.MAX_VALUE);
	}

}
