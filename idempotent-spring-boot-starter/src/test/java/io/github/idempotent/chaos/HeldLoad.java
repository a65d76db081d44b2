package io.github.idempotent.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

import io.github.idempotent.chaos.ChaosChecker.Kind;

/**
 * The campaign's clients as a fixed offered load ({@code chaos.load-rps}): one thread
 * issues a request every 1/rate seconds whatever is still outstanding (open loop), one
 * attempt each, no retry. At most {@code maxOutstanding} are outstanding at once: a
 * request that falls due while that many are is skipped and counted, never delayed, and a
 * request's latency runs from when it fell due, not from when it left; a thread that
 * falls behind sends the requests it owes at once, each timed from its own due time. So a
 * stall shows as latency and skips instead of hiding behind a client that waited
 * (coordinated omission).
 * <p>
 * Keys: every other request a new key, the others a key first sent in the last 5 s (a
 * replay, a 409 while it runs, a take-over after a crash), drawn from the seed.
 * <p>
 * The report cuts the samples, by due time, into windows around each fault: 5 s before it
 * (ending 1 s before it), the fault itself (at least 1 s), and the 5 s after it; the
 * recovery is the time from the fault's end to the first 3 s window whose throughput of
 * 200s is at least the before window's divided by 1.5 and whose p99 is at most 1.5 times
 * the before window's.
 */
final class HeldLoad {

	static final int SKIPPED = -1;

	static final long BEFORE_MILLIS = 5000;

	/**
	 * The before window ends this long before the fault: a request still running when the
	 * fault lands is the fault's, not the quiet time's.
	 */
	static final long SETTLE_MILLIS = 1000;

	static final long AFTER_MILLIS = 5000;

	static final long MIN_DURING_MILLIS = 1000;

	static final long RECOVERED_WINDOW_MILLIS = 3000;

	static final double RECOVERED_FACTOR = 1.5;

	private static final long RECENT_KEY_MILLIS = 5000;

	/**
	 * One request: when it fell due (epoch ms), how long until its answer (µs; for a
	 * skipped one, none), its status ({@link #SKIPPED}, 0 for no answer) and how many
	 * were outstanding when it left.
	 */
	record Sample(long due, long latencyMicros, int status, int outstanding) {
	}

	/**
	 * A fault's span as the load saw it: a SIGKILL lasts until the instance is up again.
	 */
	record Disruption(Kind kind, long start, long end) {
	}

	private final int rate;

	private final int maxOutstanding;

	private final String keyPrefix;

	private final Random random;

	private final Function<String, CompletableFuture<Integer>> sender;

	private final Queue<Sample> samples = new ConcurrentLinkedQueue<>();

	private final AtomicInteger outstanding = new AtomicInteger();

	private final List<Double> loadAverages = new ArrayList<>();

	/**
	 * @param sender sends one request for a key, its future completes with the status (0
	 * for no answer), never exceptionally
	 */
	HeldLoad(int rate, int maxOutstanding, String keyPrefix, long seed,
			Function<String, CompletableFuture<Integer>> sender) {
		this.rate = rate;
		this.maxOutstanding = maxOutstanding;
		this.keyPrefix = keyPrefix;
		this.random = new Random(seed * 31 + 7);
		this.sender = sender;
	}

	/** Sends until {@code end} (epoch ms); the answers keep coming after it returns. */
	void run(long end) {
		long period = 1_000_000_000L / this.rate;
		long originNanos = System.nanoTime();
		long originMillis = System.currentTimeMillis();
		List<String> keys = new ArrayList<>();
		List<Long> firstSent = new ArrayList<>();
		int recentFrom = 0;
		for (long i = 0;; i++) {
			long dueNanos = originNanos + i * period;
			long now;
			while ((now = System.nanoTime()) < dueNanos) {
				LockSupport.parkNanos(dueNanos - now);
			}
			long due = originMillis + (dueNanos - originNanos) / 1_000_000;
			if (due >= end) {
				return;
			}
			if (i % (this.rate * 10L) == 0) {
				this.loadAverages.add(loadAverage());
			}
			while (recentFrom < keys.size() && firstSent.get(recentFrom) < due - RECENT_KEY_MILLIS) {
				recentFrom++;
			}
			String key;
			if (recentFrom == keys.size() || this.random.nextBoolean()) {
				key = this.keyPrefix + keys.size();
				keys.add(key);
				firstSent.add(due);
			}
			else {
				key = keys.get(recentFrom + this.random.nextInt(keys.size() - recentFrom));
			}
			int out = this.outstanding.get();
			if (out >= this.maxOutstanding) {
				this.samples.add(new Sample(due, 0, SKIPPED, out));
				continue;
			}
			int outNow = this.outstanding.incrementAndGet();
			this.sender.apply(key).whenComplete((status, ex) -> {
				long latency = (System.nanoTime() - dueNanos) / 1000;
				this.outstanding.decrementAndGet();
				this.samples.add(new Sample(due, latency, (status != null) ? status : 0, outNow));
			});
		}
	}

	/** Waits for the outstanding answers, at most {@code timeoutMillis}. */
	boolean drain(long timeoutMillis) {
		long deadline = System.currentTimeMillis() + timeoutMillis;
		while (this.outstanding.get() > 0 && System.currentTimeMillis() < deadline) {
			ChaosStore.sleep(50);
		}
		return this.outstanding.get() == 0;
	}

	int outstanding() {
		return this.outstanding.get();
	}

	/** Every request as {@code due,latency_us,status,outstanding}, for a closer look. */
	void writeSamples(Path file) throws IOException {
		List<String> lines = new ArrayList<>();
		lines.add("due,latency_us,status,outstanding");
		samples().forEach((sample) -> lines
			.add(sample.due() + "," + sample.latencyMicros() + "," + sample.status() + "," + sample.outstanding()));
		Files.write(file, lines);
	}

	List<Sample> samples() {
		List<Sample> sorted = new ArrayList<>(this.samples);
		sorted.sort(Comparator.comparingLong(Sample::due));
		return sorted;
	}

	List<Double> loadAverages() {
		return this.loadAverages;
	}

	private static double loadAverage() {
		try {
			return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
		}
		catch (IOException | RuntimeException ex) {
			return -1;
		}
	}

	/**
	 * The requests that fell due in some spans of time, {@code millis} long in all.
	 *
	 * @param p50 in µs, {@code Long.MAX_VALUE} where it falls on skipped requests (so p99
	 * and max too)
	 */
	record Window(long millis, int due, int ok, int skipped, Map<String, Integer> statuses, long p50, long p99,
			long max, int maxOutstanding) {

		static Window of(List<Sample> samples, long millis) {
			List<Long> latencies = new ArrayList<>(samples.size());
			Map<String, Integer> statuses = new TreeMap<>();
			int ok = 0;
			int skipped = 0;
			int maxOutstanding = 0;
			for (Sample sample : samples) {
				latencies.add((sample.status() == SKIPPED) ? Long.MAX_VALUE : sample.latencyMicros());
				String status = switch (sample.status()) {
					case SKIPPED -> "skipped";
					case 0 -> "no answer";
					default -> Integer.toString(sample.status());
				};
				statuses.merge(status, 1, Integer::sum);
				ok += (sample.status() == 200) ? 1 : 0;
				skipped += (sample.status() == SKIPPED) ? 1 : 0;
				maxOutstanding = Math.max(maxOutstanding, sample.outstanding());
			}
			latencies.sort(null);
			return new Window(millis, samples.size(), ok, skipped, statuses, percentile(latencies, 0.50),
					percentile(latencies, 0.99), percentile(latencies, 1.0), maxOutstanding);
		}

		private static long percentile(List<Long> sorted, double q) {
			if (sorted.isEmpty()) {
				return 0;
			}
			int rank = (int) Math.ceil(q * sorted.size());
			return sorted.get(Math.max(0, rank - 1));
		}

		/** Answers with 200 per second. */
		double throughput() {
			return (this.millis > 0) ? this.ok * 1000.0 / this.millis : 0;
		}

		boolean recoveredFrom(Window before) {
			return throughput() * RECOVERED_FACTOR >= before.throughput() && this.p99 <= before.p99 * RECOVERED_FACTOR;
		}

	}

	/** What the load saw around one fault. */
	record Around(Disruption fault, Window before, Window during, Window after, long recoveryMillis,
			long horizonMillis) {

		boolean recovered() {
			return this.recoveryMillis >= 0;
		}

	}

	/**
	 * @param samples sorted by due time
	 * @param end when the load stopped: the last window ends there
	 */
	static List<Around> around(List<Sample> samples, List<Disruption> faults, long end) {
		List<Around> all = new ArrayList<>();
		for (int i = 0; i < faults.size(); i++) {
			Disruption fault = faults.get(i);
			Window before = window(samples, before(fault));
			Window during = window(samples, during(fault));
			Window after = window(samples, after(fault));
			// The next fault or the end of the load bounds the search.
			long horizon = (i + 1 < faults.size()) ? Math.min(end, faults.get(i + 1).start()) : end;
			long recovery = -1;
			for (long t = fault.end(); t + RECOVERED_WINDOW_MILLIS <= horizon; t += 100) {
				if (window(samples, t, t + RECOVERED_WINDOW_MILLIS).recoveredFrom(before)) {
					recovery = t - fault.end();
					break;
				}
			}
			all.add(new Around(fault, before, during, after, recovery, horizon - fault.end()));
		}
		return all;
	}

	private static Window window(List<Sample> samples, long[] span) {
		return window(samples, span[0], span[1]);
	}

	static Window window(List<Sample> samples, long from, long to) {
		return Window.of(samples.subList(firstDue(samples, from), firstDue(samples, to)), to - from);
	}

	private static Window pooled(List<Sample> samples, List<long[]> spans) {
		List<Sample> in = new ArrayList<>();
		long millis = 0;
		for (long[] span : spans) {
			in.addAll(samples.subList(firstDue(samples, span[0]), firstDue(samples, span[1])));
			millis += span[1] - span[0];
		}
		return Window.of(in, millis);
	}

	/** The index of the first sample due at or after {@code time}. */
	private static int firstDue(List<Sample> samples, long time) {
		int low = 0;
		int high = samples.size();
		while (low < high) {
			int middle = (low + high) >>> 1;
			if (samples.get(middle).due() < time) {
				low = middle + 1;
			}
			else {
				high = middle;
			}
		}
		return low;
	}

	/**
	 * The load's part of the report: the whole run, a row per fault kind (windows of its
	 * faults pooled), and a row per fault.
	 */
	String markdown(List<Disruption> faults, long start, long end) {
		List<Sample> samples = samples();
		List<Around> around = around(samples, faults, end);
		Window whole = window(samples, start, end);
		StringBuilder md = new StringBuilder();
		md.append("#### Load held while faults land\n\n")
			.append(this.rate)
			.append(" requests/s offered, open loop (one attempt each, at most ")
			.append(this.maxOutstanding)
			.append(" outstanding; latency from when a request fell due); 1-minute load average during the run ")
			.append(loadAverageSummary())
			.append(". Whole run: ")
			.append(whole.due())
			.append(" due, ")
			.append(rate(whole))
			.append(", p50 ")
			.append(seconds(whole.p50()))
			.append(", ")
			.append(p99(whole))
			.append(", max ")
			.append(seconds(whole.max()))
			.append(", at most ")
			.append(whole.maxOutstanding())
			.append(" outstanding, ")
			.append(whole.skipped())
			.append(" skipped, ")
			.append(this.outstanding.get())
			.append(" outstanding after the drain; answers by status ")
			.append(statuses(whole))
			.append(".\n\n");
		md.append(
				"Windows by due time: 5 s before a fault (ending 1 s before it), the fault itself (at least 1 s; a SIGKILL until the "
						+ "instance is up again), the 5 s after it. Recovery: from the fault's end to the first 3 s whose "
						+ "200s per second are at least the before window's / 1.5 and whose p99 is at most 1.5 x the before "
						+ "window's (median / max over the faults of the kind).\n\n");
		md.append("| fault | n | before | during | after | recovery | max outstanding before / during and after |"
				+ " skipped |\n|---|---|---|---|---|---|---|---|\n");
		Map<Kind, List<Around>> byKind = new EnumMap<>(Kind.class);
		around.forEach((a) -> byKind.computeIfAbsent(a.fault().kind(), (k) -> new ArrayList<>()).add(a));
		byKind.forEach((kind, list) -> {
			Window before = pooled(samples, list, HeldLoad::before);
			Window during = pooled(samples, list, HeldLoad::during);
			Window after = pooled(samples, list, HeldLoad::after);
			int outstandingAfter = list.stream()
				.mapToInt((a) -> Math.max(a.during().maxOutstanding(), a.after().maxOutstanding()))
				.max()
				.orElse(0);
			md.append("| ")
				.append(kind.title)
				.append(" | ")
				.append(list.size())
				.append(" | ")
				.append(cell(before))
				.append(" | ")
				.append(cell(during))
				.append(" | ")
				.append(cell(after))
				.append(" | ")
				.append(recovery(list))
				.append(" | ")
				.append(before.maxOutstanding())
				.append(" / ")
				.append(outstandingAfter)
				.append(" | ")
				.append(before.skipped() + during.skipped() + after.skipped())
				.append(" |\n");
		});
		md.append("\n| fault | during: p50, max | during: answers by status | after: answers by status |\n")
			.append("|---|---|---|---|\n");
		byKind.forEach((kind, list) -> {
			Window during = pooled(samples, list, HeldLoad::during);
			Window after = pooled(samples, list, HeldLoad::after);
			md.append("| ")
				.append(kind.title)
				.append(" | ")
				.append(seconds(during.p50()))
				.append(", ")
				.append(seconds(during.max()))
				.append(" | ")
				.append(statuses(during))
				.append(" | ")
				.append(statuses(after))
				.append(" |\n");
		});
		md.append("\n<details><summary>Each fault</summary>\n\n")
			.append("| at (s) | fault | lasted (s) | before | during | after | recovery (s) | max outstanding |\n")
			.append("|---|---|---|---|---|---|---|---|\n");
		for (Around a : around) {
			md.append("| ")
				.append(String.format(Locale.ROOT, "%.1f", (a.fault().start() - start) / 1000.0))
				.append(" | ")
				.append(a.fault().kind().title)
				.append(" | ")
				.append(String.format(Locale.ROOT, "%.1f", (a.fault().end() - a.fault().start()) / 1000.0))
				.append(" | ")
				.append(cell(a.before()))
				.append(" | ")
				.append(cell(a.during()))
				.append(" | ")
				.append(cell(a.after()))
				.append(" | ")
				.append(a.recovered() ? String.format(Locale.ROOT, "%.1f", a.recoveryMillis() / 1000.0)
						: "not in " + a.horizonMillis() / 1000 + " s")
				.append(" | ")
				.append(Math.max(a.during().maxOutstanding(), a.after().maxOutstanding()))
				.append(" |\n");
		}
		md.append("\n</details>\n\n");
		return md.toString();
	}

	private static long[] before(Disruption fault) {
		return new long[] { fault.start() - SETTLE_MILLIS - BEFORE_MILLIS, fault.start() - SETTLE_MILLIS };
	}

	private static long[] during(Disruption fault) {
		return new long[] { fault.start(), Math.max(fault.end(), fault.start() + MIN_DURING_MILLIS) };
	}

	private static long[] after(Disruption fault) {
		return new long[] { fault.end(), fault.end() + AFTER_MILLIS };
	}

	private static Window pooled(List<Sample> samples, List<Around> list, Function<Disruption, long[]> span) {
		return pooled(samples, list.stream().map((a) -> span.apply(a.fault())).toList());
	}

	private static String recovery(List<Around> list) {
		List<Long> recovered = list.stream().filter(Around::recovered).map(Around::recoveryMillis).sorted().toList();
		if (recovered.isEmpty()) {
			return "not recovered";
		}
		String text = String.format(Locale.ROOT, "%.1f s / %.1f s", recovered.get((recovered.size() - 1) / 2) / 1000.0,
				recovered.get(recovered.size() - 1) / 1000.0);
		int not = list.size() - recovered.size();
		return (not > 0) ? text + " (" + not + " not recovered before the next fault)" : text;
	}

	private static String cell(Window window) {
		return rate(window) + ", " + p99(window);
	}

	private static String rate(Window window) {
		return String.format(Locale.ROOT, "%.1f/s", window.throughput());
	}

	private static String p99(Window window) {
		return "p99 " + seconds(window.p99());
	}

	private static String seconds(long micros) {
		return (micros == Long.MAX_VALUE) ? "skipped" : String.format(Locale.ROOT, "%.2f s", micros / 1e6);
	}

	private static String statuses(Window window) {
		List<String> parts = new ArrayList<>();
		window.statuses().forEach((status, count) -> parts.add(status + ": " + count));
		return String.join(", ", parts);
	}

	private String loadAverageSummary() {
		if (this.loadAverages.isEmpty()) {
			return "not read";
		}
		double mean = this.loadAverages.stream().mapToDouble(Double::doubleValue).average().orElse(0);
		double max = this.loadAverages.stream().mapToDouble(Double::doubleValue).max().orElse(0);
		return String.format(Locale.ROOT, "%.1f on average, %.1f at most", mean, max);
	}

}
