package io.github.idempotent.testsupport;

import java.lang.reflect.Constructor;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

/**
 * A property checked over many tries on plain JUnit 5: each try draws its input from its
 * own seed ({@link Draw}) and runs the property on it; the first try that throws fails
 * the test with its seed, the input as drawn and the smallest failing input found.
 * <p>
 * The run's seed is random, or {@code -Didempotent.seed=...}: the first try draws from
 * that seed itself, so the seed a failure names replays it at once. 500 tries per
 * property, or {@code -Didempotent.tries=...}.
 * <p>
 * Shrinking: a failing input that is a string, a byte array, a list or a record of them
 * is made smaller by removing chunks of it (the end first, halves, then quarters, down to
 * single elements), kept while the property still fails with the same exception class,
 * for at most 1000 runs or 30 seconds.
 */
public final class Tries {

	private static final int DEFAULT_TRIES = 500;

	private static final int SHRINK_RUNS = 1000;

	private static final long SHRINK_NANOS = 30_000_000_000L;

	private Tries() {
	}

	public static <T> void check(Function<Draw, T> generator, Consumer<T> property) {
		check(DEFAULT_TRIES, generator, property);
	}

	/**
	 * {@link #check(Function, Consumer)} of a property whose tries are costly (a scenario
	 * of HTTP calls): {@code tries} by default, {@code -Didempotent.tries} still wins.
	 */
	public static <T> void check(int tries, Function<Draw, T> generator, Consumer<T> property) {
		Long seed = Long.getLong("idempotent.seed");
		check((seed != null) ? seed : new SplittableRandom().nextLong(), Integer.getInteger("idempotent.tries", tries),
				generator, property);
	}

	static <T> void check(long runSeed, int tries, Function<Draw, T> generator, Consumer<T> property) {
		SplittableRandom seeds = new SplittableRandom(runSeed);
		for (int i = 1; i <= tries; i++) {
			long seed = (i == 1) ? runSeed : seeds.nextLong();
			T input = null;
			try {
				input = generator.apply(new Draw(new SplittableRandom(seed)));
				property.accept(input);
			}
			catch (Throwable failure) {
				throw failed(i, tries, seed, input, failure, property);
			}
		}
	}

	private static <T> AssertionError failed(int attempt, int tries, long seed, @Nullable T input, Throwable failure,
			Consumer<T> property) {
		Object smallest = input;
		Throwable smallestFailure = failure;
		int runs = 0;
		long start = System.nanoTime();
		boolean shrunk = input != null;
		while (shrunk && runs < SHRINK_RUNS && System.nanoTime() - start < SHRINK_NANOS) {
			shrunk = false;
			for (Object candidate : smaller(smallest)) {
				if (++runs > SHRINK_RUNS) {
					break;
				}
				Throwable candidateFailure = failure(property, candidate);
				if (candidateFailure != null && candidateFailure.getClass() == failure.getClass()) {
					smallest = candidate;
					smallestFailure = candidateFailure;
					shrunk = true;
					break;
				}
			}
		}
		return new AssertionError(
				"Property failed at try " + attempt + " of " + tries + ", seed " + seed + " (replay: -Didempotent.seed="
						+ seed + ")\n  smallest failing input (" + runs + " shrink runs): " + describe(smallest)
						+ "\n  input as drawn: " + describe(input) + "\n  failure: " + smallestFailure,
				smallestFailure);
	}

	@SuppressWarnings("unchecked")
	private static <T> @Nullable Throwable failure(Consumer<T> property, Object input) {
		try {
			property.accept((T) input);
			return null;
		}
		catch (Throwable failure) {
			return failure;
		}
	}

	/**
	 * Smaller forms of {@code value}, the smallest first.
	 */
	private static List<Object> smaller(@Nullable Object value) {
		List<Object> smaller = new ArrayList<>();
		if (value instanceof String text) {
			for (int[] cut : cuts(text.length())) {
				smaller.add(text.substring(0, cut[0]) + text.substring(cut[1]));
			}
		}
		else if (value instanceof byte[] bytes) {
			for (int[] cut : cuts(bytes.length)) {
				byte[] shorter = Arrays.copyOf(bytes, bytes.length - (cut[1] - cut[0]));
				System.arraycopy(bytes, cut[1], shorter, cut[0], bytes.length - cut[1]);
				smaller.add(shorter);
			}
		}
		else if (value instanceof List<?> list) {
			for (int[] cut : cuts(list.size())) {
				List<Object> shorter = new ArrayList<>(list.subList(0, cut[0]));
				shorter.addAll(list.subList(cut[1], list.size()));
				smaller.add(shorter);
			}
			for (int i = 0; i < list.size(); i++) {
				for (Object element : smaller(list.get(i))) {
					List<Object> changed = new ArrayList<>(list);
					changed.set(i, element);
					smaller.add(changed);
				}
			}
		}
		else if (value instanceof Record record) {
			smaller.addAll(smallerRecords(record));
		}
		return smaller;
	}

	/**
	 * The ranges {@code [from, to)} to remove from a sequence of {@code length}: all of
	 * it, then halves, quarters and so on down to single elements, the end first.
	 */
	private static List<int[]> cuts(int length) {
		List<int[]> cuts = new ArrayList<>();
		for (int size = length; size > 0; size /= 2) {
			for (int to = length; to - size >= 0; to -= size) {
				cuts.add(new int[] { to - size, to });
			}
		}
		return cuts;
	}

	private static List<Object> smallerRecords(Record record) {
		try {
			RecordComponent[] components = record.getClass().getRecordComponents();
			Object[] values = new Object[components.length];
			for (int i = 0; i < components.length; i++) {
				components[i].getAccessor().setAccessible(true);
				values[i] = components[i].getAccessor().invoke(record);
			}
			Constructor<?> constructor = record.getClass()
				.getDeclaredConstructor(Arrays.stream(components).map(RecordComponent::getType).toArray(Class[]::new));
			constructor.setAccessible(true);
			List<Object> smaller = new ArrayList<>();
			for (int i = 0; i < values.length; i++) {
				for (Object component : smaller(values[i])) {
					Object[] changed = values.clone();
					changed[i] = component;
					smaller.add(constructor.newInstance(changed));
				}
			}
			return smaller;
		}
		catch (ReflectiveOperationException ex) {
			throw new IllegalStateException("Cannot shrink " + record.getClass(), ex);
		}
	}

	static String describe(@Nullable Object value) {
		if (value instanceof String text) {
			StringBuilder quoted = new StringBuilder("\"");
			text.chars()
				.forEach((c) -> quoted.append((c == '"' || c == '\\') ? "\\" + (char) c
						: (c >= ' ' && c <= '~') ? String.valueOf((char) c) : String.format("\\u%04x", c)));
			return quoted.append("\" (").append(text.length()).append(" chars)").toString();
		}
		if (value instanceof byte[] bytes) {
			return Arrays.toString(bytes) + " (" + bytes.length + " bytes)";
		}
		if (value instanceof List<?> list) {
			return list.stream().map(Tries::describe).collect(Collectors.joining(", ", "[", "]"));
		}
		if (value instanceof Record record) {
			return Arrays.stream(record.getClass().getRecordComponents()).map((component) -> {
				try {
					component.getAccessor().setAccessible(true);
					return component.getName() + "=" + describe(component.getAccessor().invoke(record));
				}
				catch (ReflectiveOperationException ex) {
					return component.getName() + "=?";
				}
			}).collect(Collectors.joining(", ", record.getClass().getSimpleName() + "[", "]"));
		}
		return String.valueOf(value);
	}

}
