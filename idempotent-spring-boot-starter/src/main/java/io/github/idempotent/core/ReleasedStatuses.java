package io.github.idempotent.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collection;
import java.util.List;
import java.util.Locale;

import org.springframework.util.Assert;

/**
 * The HTTP error statuses whose responses release their key instead of being stored, as a
 * thrown exception does, so a retry runs the method again: one by one ({@code 429}), by
 * class ({@code 5xx}), or {@code none}.
 */
public final class ReleasedStatuses {

	/** Every 5xx and 429: the statuses that say "not now" rather than "no". */
	public static final ReleasedStatuses DEFAULT = of("429", "5xx");

	/** No status: every response is stored and replayed. */
	public static final ReleasedStatuses NONE = of("none");

	private static final int LOWEST = 400;

	private static final int HIGHEST = 599;

	private final BitSet released;

	private final List<String> values;

	private ReleasedStatuses(BitSet released, List<String> values) {
		this.released = released;
		this.values = List.copyOf(values);
	}

	/**
	 * The statuses {@code values} name: each 400 to 599, {@code 4xx}, {@code 5xx}, or
	 * {@code none} alone; a value may hold several, separated by commas.
	 * @throws IllegalArgumentException naming a value that is none of these
	 */
	public static ReleasedStatuses of(Collection<String> values) {
		Assert.notNull(values, "values must not be null");
		BitSet released = new BitSet(HIGHEST - LOWEST + 1);
		List<String> named = new ArrayList<>();
		for (String value : values) {
			for (String token : value.split(",")) {
				String status = token.trim().toLowerCase(Locale.ROOT);
				if (!status.isEmpty()) {
					add(released, status);
					named.add(status);
				}
			}
		}
		Assert.isTrue(!named.contains("none") || named.size() == 1,
				() -> "'none' releases no status and goes alone, but was given with " + named);
		return new ReleasedStatuses(released, named.isEmpty() ? List.of("none") : named);
	}

	public static ReleasedStatuses of(String... values) {
		return of(Arrays.asList(values));
	}

	private static void add(BitSet released, String status) {
		if (status.equals("none")) {
			return;
		}
		if (status.equals("4xx") || status.equals("5xx")) {
			int from = (status.charAt(0) - '0') * 100;
			released.set(from - LOWEST, from - LOWEST + 100);
			return;
		}
		int code = status.matches("\\d{3}") ? Integer.parseInt(status) : -1;
		Assert.isTrue(code >= LOWEST && code <= HIGHEST,
				() -> "'" + status + "' is not a status that can release a key: "
						+ "use an error status from 400 to 599 (\"429\"), a class (\"4xx\", \"5xx\"), or \"none\"; "
						+ "a success is the outcome a key exists to keep");
		released.set(code - LOWEST);
	}

	/** Whether a response with {@code status} releases its key. */
	public boolean contains(int status) {
		return status >= LOWEST && status <= HIGHEST && this.released.get(status - LOWEST);
	}

	@Override
	public boolean equals(Object other) {
		return (other instanceof ReleasedStatuses that) && this.released.equals(that.released);
	}

	@Override
	public int hashCode() {
		return this.released.hashCode();
	}

	/** The statuses as they were named, {@code "429,5xx"}. */
	@Override
	public String toString() {
		return String.join(",", this.values);
	}

}
