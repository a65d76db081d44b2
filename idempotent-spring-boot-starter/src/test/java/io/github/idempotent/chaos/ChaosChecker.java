package io.github.idempotent.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BiPredicate;

import org.jspecify.annotations.Nullable;

/**
 * The verdict of a campaign, from the ledgers (what ran), the client history (what
 * callers saw) and the fault timeline: it trusts neither the store nor the library.
 * <p>
 * Per key: the first execution is due; each further one must be matched to an earlier
 * execution of the key that a fault the guarantees allow hit (docs/guide.md, "Guarantees
 * and their limits"), each earlier execution excusing at most one re-run:
 * <ul>
 * <li>a crash mid-call: the instance running it was SIGKILLed before it ended;</li>
 * <li>an owner stalled past its lease and taken over: its process was paused (SIGSTOP)
 * past the lease, or its store connection stalled past the lease, or the store was down
 * for longer than the lease less one renewal period (its last renewal may precede the
 * outage by that much), while it ran, and the re-run started before it ended;</li>
 * <li>a forced delete of the key while it ran, the re-run starting after the delete;</li>
 * <li>the result could not be stored: it ended while the store was down (restart).</li>
 * </ul>
 * Cuts, stalls under the lease, pauses under the lease and memory pressure under
 * {@code noeviction} excuse nothing. Memory full past {@code max-duration} excuses no
 * re-run either; it lets a key whose only execution ended under it answer, at the end,
 * that its result was not stored ({@code result-unavailable}) instead of replaying it.
 * Every successful answer must come from a ledgered execution of its key, and answers may
 * differ only where a re-run was excused: an answered execution other than the one
 * replayed at the end must be one that an excused re-run superseded. After the faults
 * heal and the lease passes, every key must answer (none in progress, checked over HTTP
 * and read from the store directly) and a completed result must replay, not run again. A
 * re-run excused by a crash, a stall or pause past the lease, or a forced delete claimed
 * a key whose placeholder was in the store, so it must have been told that it took over
 * (attempt 2 or more in its ledger line), unless the store restarted or failed over
 * meanwhile and may have lost that placeholder.
 */
final class ChaosChecker {

	/**
	 * Excuses of a re-run that claimed a key whose placeholder was still in the store:
	 * the claim took it over, and the method must be told so
	 * ({@code IdempotencyContext.isTakeover()}).
	 */
	private static final Set<String> TAKEOVERS = Set.of("crash mid-call (SIGKILL)", "paused past the lease, taken over",
			"store connection stalled past the lease, taken over", "forced delete");

	enum Kind {

		CUT("connection cut"), STALL("stall under the lease"), STALL_PAST_LEASE("stall past the lease"),
		PAUSE("pause under the lease (SIGSTOP)"), PAUSE_PAST_LEASE("pause past the lease (SIGSTOP)"),
		KILL("SIGKILL and restart"), FORCE_DELETE("forced delete"), STORE_RESTART("store restart"),
		MEMORY_PRESSURE("memory pressure (noeviction)"),
		MEMORY_PRESSURE_PAST_MAX_DURATION("memory full past max-duration (noeviction)"),
		FAILOVER("Sentinel failover (primary killed)"),
		CLUSTER_FAILOVER("Cluster primary failover (primary killed, replica promoted)");

		final String title;

		Kind(String title) {
			this.title = title;
		}

	}

	/**
	 * One execution of the method, as its ledger line says.
	 *
	 * @param attempt the attempt the library told the method it was
	 * ({@code IdempotencyContext}), 0 when not recorded
	 */
	record Execution(String id, String key, int instance, long start, @Nullable Long end, int attempt) {

		Execution(String id, String key, int instance, long start, @Nullable Long end) {
			this(id, key, instance, start, end, 0);
		}

	}

	/** A fault on {@code instance} (-1: the store) or {@code key}, from start to end. */
	record Fault(Kind kind, int instance, @Nullable String key, long start, long end, boolean effective,
			String detail) {
	}

	/** A successful answer a client saw. */
	record Answer(String key, String execution, int instance, long time, boolean replayed) {
	}

	/**
	 * The last question for a key, after the faults healed.
	 *
	 * @param execution the execution answered, or {@link #NOT_STORED} for the answer that
	 * the call completed without its result stored
	 */
	record Probe(String key, int status, @Nullable String execution, long time) {
	}

	/** A probe's execution when it was answered that the result was not stored. */
	static final String NOT_STORED = "(result not stored)";

	/**
	 * @param failoverLossMillis the longest time between a write that a failover lost and
	 * the crash of the primary (-1: none lost)
	 */
	record Verdict(Map<Kind, Integer> faults, int keys, int executions, Map<String, Integer> excused,
			List<String> violations, long failoverLossMillis) {
	}

	private static final long COMPLETION_SLACK_MILLIS = 1000;

	private final long leaseMillis;

	/** How long before a failover a write may be lost without wait-replicas. */
	static final long FAILOVER_LOSS_WINDOW_MILLIS = 2000;

	private final int waitReplicas;

	private final BiPredicate<Fault, String> failoverReaches;

	private long failoverLossMillis = -1;

	ChaosChecker(long leaseMillis) {
		this(leaseMillis, 0);
	}

	ChaosChecker(long leaseMillis, int waitReplicas) {
		this(leaseMillis, waitReplicas, (failover, key) -> true);
	}

	/**
	 * @param failoverReaches whether a failover may have lost the writes of a key (on a
	 * Cluster, only the keys of the killed primary's slots)
	 */
	ChaosChecker(long leaseMillis, int waitReplicas, BiPredicate<Fault, String> failoverReaches) {
		this.leaseMillis = leaseMillis;
		this.waitReplicas = waitReplicas;
		this.failoverReaches = failoverReaches;
	}

	static List<Execution> readLedgers(List<Path> ledgers) {
		Map<String, long[]> starts = new LinkedHashMap<>();
		Map<String, String[]> fields = new LinkedHashMap<>();
		Map<String, Long> ends = new java.util.HashMap<>();
		for (Path ledger : ledgers) {
			if (!Files.exists(ledger)) {
				continue;
			}
			try {
				for (String line : Files.readAllLines(ledger)) {
					String[] parts = line.split(" ");
					if (parts.length != 7) {
						continue; // a line torn by a SIGKILL mid-write
					}
					if (parts[0].equals("START")) {
						starts.put(parts[1], new long[] { Long.parseLong(parts[5]) });
						fields.put(parts[1], parts);
					}
					else if (parts[0].equals("END")) {
						ends.put(parts[1], Long.parseLong(parts[5]));
					}
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}
		List<Execution> executions = new ArrayList<>();
		starts.forEach((id, start) -> executions.add(new Execution(id, fields.get(id)[2],
				Integer.parseInt(fields.get(id)[3]), start[0], ends.get(id), Integer.parseInt(fields.get(id)[6]))));
		return executions;
	}

	Verdict check(List<Execution> executions, List<Fault> faults, List<Answer> answers, List<Probe> probes,
			List<String> inProgressInStore) {
		Map<Kind, Integer> faultCounts = new EnumMap<>(Kind.class);
		for (Fault fault : faults) {
			faultCounts.merge(fault.kind(), 1, Integer::sum);
		}
		Map<String, List<Execution>> byKey = new TreeMap<>();
		for (Execution execution : executions) {
			byKey.computeIfAbsent(execution.key(), (key) -> new ArrayList<>()).add(execution);
		}
		Map<String, List<Answer>> answersByKey = new TreeMap<>();
		for (Answer answer : answers) {
			answersByKey.computeIfAbsent(answer.key(), (key) -> new ArrayList<>()).add(answer);
		}
		Map<String, Probe> probesByKey = new TreeMap<>();
		probes.forEach((probe) -> probesByKey.put(probe.key(), probe));
		Set<String> keys = new java.util.TreeSet<>(byKey.keySet());
		keys.addAll(answersByKey.keySet());
		keys.addAll(probesByKey.keySet());

		Map<String, Integer> excused = new TreeMap<>();
		List<String> violations = new ArrayList<>();
		for (String key : keys) {
			List<Execution> ran = new ArrayList<>(byKey.getOrDefault(key, List.of()));
			ran.sort(Comparator.comparingLong(Execution::start));
			Set<String> superseded = new HashSet<>();
			for (int i = 1; i < ran.size(); i++) {
				Execution rerun = ran.get(i);
				String cause = null;
				for (int j = 0; j < i && cause == null; j++) {
					Execution earlier = ran.get(j);
					if (!superseded.contains(earlier.id())) {
						cause = excuse(earlier, rerun, faults);
						if (cause != null) {
							superseded.add(earlier.id());
						}
					}
				}
				if (cause != null) {
					excused.merge(cause, 1, Integer::sum);
					if (TAKEOVERS.contains(cause) && rerun.attempt() == 1
							&& !storeMayHaveLostTheClaim(ran, i, faults)) {
						violations.add("key " + key + ": re-run after a " + cause + " was told it was attempt 1, "
								+ "not that it took over a call that never finished: " + describe(ran, i));
					}
				}
				else {
					Probe probe = probesByKey.get(key);
					boolean atProbe = probe != null && rerun.start() >= probe.time();
					violations.add("key " + key + ": "
							+ (atProbe ? "a completed result was lost, the final probe ran "
									: "re-run not excused by any allowed fault: ")
							+ describe(ran, i) + "; faults around it: " + around(ran, faults));
				}
			}
			Set<String> ledgered = new HashSet<>();
			ran.forEach((execution) -> ledgered.add(execution.id()));
			Probe probe = probesByKey.get(key);
			boolean notStored = probe != null && NOT_STORED.equals(probe.execution());
			String stored = (probe != null && !notStored) ? probe.execution() : null;
			Set<String> reported = new HashSet<>();
			for (Answer answer : answersByKey.getOrDefault(key, List.of())) {
				if (!ledgered.contains(answer.execution())) {
					violations.add("key " + key + ": instance " + answer.instance() + " answered execution "
							+ answer.execution() + ", which no ledger holds");
				}
				else if (stored != null && !answer.execution().equals(stored)
						&& !superseded.contains(answer.execution()) && reported.add(answer.execution())) {
					violations.add("key " + key + ": answers differ, " + answer.execution() + " (instance "
							+ answer.instance() + (answer.replayed() ? ", replayed" : "") + ") and " + stored
							+ " (replayed at the end), with no excused re-run between them; executions: "
							+ describe(ran, -1));
				}
			}
			if (notStored && !refusedPastMaxDuration(ran, faults)) {
				violations.add("key " + key + ": answered that its result was not stored, with no memory full past "
						+ "max-duration when it ran; executions: " + describe(ran, -1));
			}
			else if (probe != null && probe.status() != 200 && !notStored) {
				violations
					.add("key " + key + ": answered " + probe.status() + " after the faults healed and the lease passed"
							+ ((probe.status() == 409) ? " (in progress)" : "") + "; executions: " + describe(ran, -1));
			}
		}
		for (String record : inProgressInStore) {
			violations.add("record " + record + " is still in progress in the store after the faults healed");
		}
		int executionCount = executions.size();
		return new Verdict(faultCounts, keys.size(), executionCount, excused, violations, this.failoverLossMillis);
	}

	/**
	 * Whether the key's last execution ended while the store's memory was full past
	 * max-duration: its result was refused until then, and the call kept its key with a
	 * record that says so.
	 */
	private static boolean refusedPastMaxDuration(List<Execution> ran, List<Fault> faults) {
		if (ran.isEmpty()) {
			return false;
		}
		Execution last = ran.get(ran.size() - 1);
		long end = (last.end() != null) ? last.end() : Long.MAX_VALUE;
		return faults.stream()
			.anyMatch((fault) -> fault.kind() == Kind.MEMORY_PRESSURE_PAST_MAX_DURATION && fault.effective()
					&& fault.start() <= end + COMPLETION_SLACK_MILLIS && fault.end() >= last.start());
	}

	/**
	 * Whether the store itself may have lost the placeholder the re-run took over (a
	 * restart or a failover since the first execution of the key started): the re-run
	 * then finds no trace of the earlier attempt, and attempt 1 is right.
	 */
	private static boolean storeMayHaveLostTheClaim(List<Execution> ran, int rerun, List<Fault> faults) {
		long first = ran.get(0).start();
		long until = ran.get(rerun).start();
		for (Fault fault : faults) {
			boolean storeLoss = fault.kind() == Kind.STORE_RESTART || fault.kind() == Kind.FAILOVER
					|| fault.kind() == Kind.CLUSTER_FAILOVER;
			if (storeLoss && fault.effective() && fault.end() >= first && fault.start() <= until) {
				return true;
			}
		}
		return false;
	}

	/** Why {@code rerun} may run after {@code earlier}, or null. */
	private @Nullable String excuse(Execution earlier, Execution rerun, List<Fault> faults) {
		long earlierEnd = (earlier.end() != null) ? earlier.end() : Long.MAX_VALUE;
		// A take-over is a claim made before the earlier owner's completion reached the
		// store, which follows its END line by a round trip: longer on a JVM just
		// resumed from a pause, hence the second of slack.
		boolean overlapping = rerun.start() < earlierEnd + COMPLETION_SLACK_MILLIS;
		for (Fault fault : faults) {
			if (!fault.effective()) {
				continue;
			}
			boolean onItsInstance = fault.instance() == earlier.instance();
			boolean during = fault.start() <= earlierEnd && fault.end() >= earlier.start();
			// Cut off from the store, the earlier owner's completion cannot land before
			// the fault ends either: the result could not be stored when the method
			// returned, and a take-over claimed the key first.
			boolean takenOver = overlapping || (during && rerun.start() < fault.end() + COMPLETION_SLACK_MILLIS);
			switch (fault.kind()) {
				case KILL -> {
					if (onItsInstance && earlier.start() <= fault.start() && earlierEnd >= fault.start()) {
						return "crash mid-call (SIGKILL)";
					}
				}
				case PAUSE_PAST_LEASE -> {
					if (onItsInstance && during && takenOver) {
						return "paused past the lease, taken over";
					}
				}
				case STALL_PAST_LEASE -> {
					if (onItsInstance && during && takenOver) {
						return "store connection stalled past the lease, taken over";
					}
				}
				case FORCE_DELETE -> {
					// The call holds its key from its claim, a round trip before its
					// START
					// line: a delete that ends after START may have hit the claim.
					if (earlier.key().equals(fault.key()) && earlier.start() <= fault.end()
							&& earlierEnd >= fault.start() && rerun.start() >= fault.start()) {
						return "forced delete";
					}
				}
				case STORE_RESTART, FAILOVER, CLUSTER_FAILOVER -> {
					// A failover without wait-replicas first: a method that returned
					// before
					// the crash may have had its result acknowledged and lost (the loss
					// window is measured from these).
					boolean lost = failoverMayHaveLost(earlier, rerun, fault, earlierEnd);
					if (lost && earlier.end() != null && earlier.end() < fault.start()) {
						return lostWrite(fault, earlierEnd);
					}
					// The method returned while the store was down: its result could not
					// be
					// stored (the completion follows the END line by a round trip).
					if (earlier.end() != null && earlier.end() >= fault.start() - 1000
							&& earlier.end() <= fault.end()) {
						return "result not stored (store down when the method returned)";
					}
					// The owner's lease runs from its last renewal, which may come a
					// renewal period (a third of the lease) before the store went down:
					// an
					// outage of two thirds of the lease can outlast it, and no renewal
					// gets
					// through before it ends (docs/guide.md, "Guarantees and their
					// limits").
					if (fault.end() - fault.start() > this.leaseMillis * 2 / 3 && during && takenOver) {
						return "store down past the lease, taken over";
					}
					if (lost) {
						return lostWrite(fault, earlierEnd);
					}
				}
				default -> {
				}
			}
		}
		return null;
	}

	/**
	 * Without wait-replicas the promoted replica may miss the last writes of the old
	 * primary: the claim or the result of a call that wrote shortly before the crash (the
	 * guide's "the store loses a record"), on a Cluster only for a key of the killed
	 * primary's slots.
	 */
	private boolean failoverMayHaveLost(Execution earlier, Execution rerun, Fault fault, long earlierEnd) {
		boolean failover = fault.kind() == Kind.FAILOVER || fault.kind() == Kind.CLUSTER_FAILOVER;
		return failover && this.waitReplicas == 0 && this.failoverReaches.test(fault, earlier.key())
				&& earlier.start() <= fault.start() && earlierEnd >= fault.start() - FAILOVER_LOSS_WINDOW_MILLIS
				&& rerun.start() >= fault.start();
	}

	/** Counts a lost write in the loss window: how long before the crash it ended. */
	private String lostWrite(Fault fault, long earlierEnd) {
		this.failoverLossMillis = Math.max(this.failoverLossMillis,
				fault.start() - Math.min(earlierEnd, fault.start()));
		return "failover lost a write (no wait-replicas)";
	}

	private static String describe(List<Execution> ran, int highlight) {
		StringBuilder text = new StringBuilder();
		for (int i = 0; i < ran.size(); i++) {
			Execution execution = ran.get(i);
			text.append((i == highlight) ? "**" : "")
				.append(execution.id())
				.append(" on instance ")
				.append(execution.instance())
				.append(" [")
				.append(execution.start())
				.append(", ")
				.append((execution.end() != null) ? execution.end() : "no end")
				.append("]")
				.append((i == highlight) ? "**" : "")
				.append((i < ran.size() - 1) ? ", " : "");
		}
		return text.toString();
	}

	private static String around(List<Execution> ran, List<Fault> faults) {
		long from = ran.get(0).start() - 3000;
		long to = ran.stream()
			.mapToLong((execution) -> (execution.end() != null) ? execution.end() : execution.start())
			.max()
			.orElse(from) + 3000;
		List<String> near = new ArrayList<>();
		for (Fault fault : faults) {
			if (fault.end() >= from && fault.start() <= to) {
				near.add(fault.kind().name().toLowerCase() + "("
						+ ((fault.instance() >= 0) ? "instance " + fault.instance()
								: (fault.key() != null) ? fault.key() : "store")
						+ ", " + fault.start() + "-" + fault.end() + ")");
			}
		}
		return near.isEmpty() ? "none" : String.join(", ", near);
	}

}
