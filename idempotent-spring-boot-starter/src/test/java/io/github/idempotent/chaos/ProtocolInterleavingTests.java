package io.github.idempotent.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.ResolvableType;
import org.springframework.util.unit.DataSize;

import io.github.idempotent.chaos.ChaosChecker.Answer;
import io.github.idempotent.chaos.ChaosChecker.Execution;
import io.github.idempotent.chaos.ChaosChecker.Fault;
import io.github.idempotent.chaos.ChaosChecker.Kind;
import io.github.idempotent.chaos.ChaosChecker.Probe;
import io.github.idempotent.chaos.ChaosChecker.Verdict;
import io.github.idempotent.core.FailureMode;
import io.github.idempotent.core.IdempotencyContext;
import io.github.idempotent.core.IdempotencyException;
import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.core.IdempotencyInProgressException;
import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyPolicy;
import io.github.idempotent.core.JacksonResultCodec;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.IdempotencyRecord;
import io.github.idempotent.store.InspectableIdempotencyStore;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.cache.CachingIdempotencyStore;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;
import io.github.idempotent.testsupport.QuietLogs;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The protocol's own classes under schedules explored one step at a time: two instances
 * (an {@link IdempotencyExecutor} each, with its lease watchdog, renewal threads and
 * local result cache) share one in-memory store; each calls the method under the same
 * key, and an operator deletes the key with force, all at once.
 * {@link InterleavingScheduler} draws the order of their steps from a seed: every store
 * request and answer, every watchdog tick and renewal, the method's run, the delete.
 * <p>
 * After the calls end, a last call on the second instance probes the key. The verdict is
 * the chaos campaign's ({@link ChaosChecker}): at most one run per key unless a forced
 * delete excuses the re-run (which must be told it takes over), every successful answer
 * the same unless a re-run superseded it, no key in progress after the calls end, a
 * completed result never run again. Beside it, {@link SteppedStore.Fences}: once the
 * store answered that it deleted a record in progress, the next claim finds the key free.
 * <p>
 * A run explores {@code -Dinterleavings.schedules} schedules (500 by default, about 25
 * seconds on 2 cores) from a seed printed at the start, {@code -Dinterleavings.seed} or
 * the clock. A failing schedule is reported with its own seed and its steps, and
 * {@code -Dinterleavings.schedule=<seed>} replays that one schedule.
 * <p>
 * Why a scheduler of its own, not Fray or Lincheck: Fray runs a test on a JDK image its
 * Maven plugin instruments at build time (a jlink'd copy of the JDK, several minutes on
 * two cores), with every test of the module forked onto it; Lincheck explores operations
 * on one data structure, not threads that the code under test starts itself (the
 * watchdog's timer and renewal pool). Neither fits the default build on Java 17 in a
 * minute. The price is that steps are set only at the store, the timer and the method:
 * the interleavings of the library's threads between two store calls are not explored,
 * only those of what they send to the store and when.
 */
class ProtocolInterleavingTests {

	private static final String OPERATION = "interleaved";

	private static final Fingerprint PAYLOAD = new Fingerprint("payload");

	private static final int MAX_STEPS = 2000;

	/**
	 * What a run counts the schedules of, by a step that shows it.
	 */
	private static final Map<String, String> SIGHTS = Map.of("a renewal", ": renew answered", "a renewal refused",
			"renew answered false", "a forced delete of a call in progress", "forced delete answered DELETED",
			"a takeover", "attempt=2", "a completion refused", "complete answered false",
			"a renewal that extended the lease", "renew answered true");

	private final IdempotencyPolicy policy = new IdempotencyPolicy(OPERATION, Duration.ofHours(1), Duration.ofMillis(1),
			Duration.ZERO, Duration.ofSeconds(1), List.of(),
			new JacksonResultCodec(new JsonMapper()).bind(ResolvableType.forClass(String.class)), Duration.ofHours(1));

	@Test
	void twoInstancesAndAForcedDeleteKeepTheGuaranteesInEverySchedule() {
		// Takeovers, lost leases and late renewals are what the schedules are for: their
		// warnings would fill the console by the thousand.
		try (QuietLogs quiet = QuietLogs.ofTheLibrary()) {
			explore();
		}
	}

	private void explore() {
		String replay = System.getProperty("interleavings.schedule");
		if (replay != null) {
			Schedule schedule = explore(Long.parseLong(replay));
			System.out.println("Schedule " + replay + ":\n  " + String.join("\n  ", schedule.trace));
			assertThat(schedule.violations).as(schedule.report()).isEmpty();
			return;
		}
		long seed = Long.getLong("interleavings.seed", System.currentTimeMillis());
		int schedules = Integer.getInteger("interleavings.schedules", 500);
		System.out.println("Interleavings: exploring " + schedules + " schedules from seed " + seed
				+ " (-Dinterleavings.seed=" + seed + " runs them again)");
		Random seeds = new Random(seed);
		long started = System.nanoTime();
		int steps = 0;
		Map<String, Integer> seen = new TreeMap<>();
		for (int i = 0; i < schedules; i++) {
			Schedule schedule = explore(seeds.nextLong());
			assertThat(schedule.violations).as(schedule.report()).isEmpty();
			steps += schedule.trace.size();
			SIGHTS.forEach((sight, step) -> {
				if (schedule.trace.stream().anyMatch((line) -> line.contains(step))) {
					seen.merge(sight, 1, Integer::sum);
				}
			});
		}
		System.out.println("Interleavings: " + schedules + " schedules, " + steps + " steps, no violation, in "
				+ Duration.ofNanos(System.nanoTime() - started).toMillis() + " ms; schedules with " + seen);
	}

	private Schedule explore(long seed) {
		InterleavingScheduler scheduler = new InterleavingScheduler(seed, "interleavings-" + seed);
		Random choices = new Random(seed ^ 0x5DEECE66DL);
		boolean forcedDelete = choices.nextInt(5) != 0;
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
		List<String> violations = Collections.synchronizedList(new ArrayList<>());
		SteppedStore.Fences fences = new SteppedStore.Fences(violations);
		Ledger ledger = new Ledger(scheduler);
		RecordKey key = new RecordKey("idempotent:interleaved:k-" + Long.toHexString(seed));
		Instance a = new Instance("A", 0, scheduler, store, fences);
		Instance b = new Instance("B", 1, scheduler, store, fences);
		List<Fault> faults = Collections.synchronizedList(new ArrayList<>());
		try (a; b) {
			a.call(this.policy, key, ledger);
			b.call(this.policy, key, ledger);
			if (forcedDelete) {
				scheduler.start("operator", true, () -> {
					if (a.cache.deleteInProgress(key) == InspectableIdempotencyStore.Deletion.DELETED) {
						long at = SteppedStore.reachedAt() * 10_000L;
						faults.add(new Fault(Kind.FORCE_DELETE, -1, key.value(), at, at, true, ""));
					}
				});
			}
			scheduler.run(MAX_STEPS);
			Probe probe = b.probe(this.policy, key, ledger);
			List<String> inProgress = new ArrayList<>();
			Optional<IdempotencyRecord> record = store.inspect(key);
			if (record.isPresent() && record.get().state() == IdempotencyRecord.State.IN_PROGRESS) {
				inProgress.add(key.value());
			}
			Verdict verdict = new ChaosChecker(1).check(ledger.executions(key.value()), faults, ledger.answers,
					List.of(probe), inProgress);
			violations.addAll(verdict.violations());
			violations.addAll(ledger.failures);
		}
		catch (RuntimeException ex) {
			violations.add(ex.toString());
		}
		return new Schedule(seed, scheduler.trace(), violations);
	}

	private record Schedule(long seed, List<String> trace, List<String> violations) {

		String report() {
			return "schedule " + this.seed + " (replay: -Dinterleavings.schedule=" + this.seed + ")\n  "
					+ String.join("\n  ", this.trace);
		}

	}

	/**
	 * What ran and what the callers were answered, in steps of the scheduler (ten
	 * thousand to a step, so that the checker's second of slack stays within one).
	 */
	private static final class Ledger {

		private final InterleavingScheduler scheduler;

		private final List<Execution> executions = Collections.synchronizedList(new ArrayList<>());

		private final List<Answer> answers = Collections.synchronizedList(new ArrayList<>());

		private final List<String> failures = Collections.synchronizedList(new ArrayList<>());

		private final AtomicInteger runs = new AtomicInteger();

		Ledger(InterleavingScheduler scheduler) {
			this.scheduler = scheduler;
		}

		long now() {
			return this.scheduler.step() * 10_000L;
		}

		/**
		 * The call that ran {@code id} holds its key until its completion reaches the
		 * store, a step or more after the method's end.
		 */
		void completed(String id, long at) {
			synchronized (this.executions) {
				this.executions.replaceAll((e) -> (e.id().equals(id) && e.end() != null && e.end() < at)
						? new Execution(e.id(), e.key(), e.instance(), e.start(), at, e.attempt()) : e);
			}
		}

		List<Execution> executions(String key) {
			return this.executions.stream()
				.map((e) -> new Execution(e.id(), key, e.instance(), e.start(), e.end(), e.attempt()))
				.toList();
		}

	}

	private static final class Instance implements AutoCloseable {

		private final String name;

		private final int number;

		private final InterleavingScheduler scheduler;

		private final CachingIdempotencyStore cache;

		private final IdempotencyExecutor executor;

		Instance(String name, int number, InterleavingScheduler scheduler, InMemoryIdempotencyStore store,
				SteppedStore.Fences fences) {
			this.name = name;
			this.number = number;
			this.scheduler = scheduler;
			this.cache = new CachingIdempotencyStore(new SteppedStore(scheduler, name, store, fences),
					DataSize.ofMegabytes(1), Duration.ofHours(1));
			this.executor = new IdempotencyExecutor(this.cache, FailureMode.CLOSED, 1 << 20,
					new SteppedTimer(scheduler, name), IdempotencyObserver.NONE);
		}

		void call(IdempotencyPolicy policy, RecordKey key, Ledger ledger) {
			this.scheduler.start(this.name, true, () -> {
				try {
					Object answer = this.executor.execute(policy, "k", key, PAYLOAD, () -> run(ledger, true), null);
					ledger.completed((String) answer, SteppedStore.reachedAt() * 10_000L);
					ledger.answers.add(new Answer(key.value(), (String) answer, this.number, ledger.now(),
							!ranHere(ledger, (String) answer)));
				}
				catch (IdempotencyInProgressException ex) {
					// A refusal, not an answer: the caller retries later.
				}
				catch (Throwable ex) {
					ledger.failures.add("instance " + this.name + " failed: " + ex);
				}
			});
		}

		Probe probe(IdempotencyPolicy policy, RecordKey key, Ledger ledger) {
			long at = ledger.now() + 10_000;
			try {
				Object answer = this.executor.execute(policy, "k", key, PAYLOAD, () -> run(ledger, false), null);
				return new Probe(key.value(), 200, (String) answer, at);
			}
			catch (IdempotencyException ex) {
				return new Probe(key.value(), (ex instanceof IdempotencyInProgressException) ? 409 : 500, null, at);
			}
			catch (Throwable ex) {
				ledger.failures.add("the probe failed: " + ex);
				return new Probe(key.value(), 500, null, at);
			}
		}

		private String run(Ledger ledger, boolean stepped) {
			String id = this.name + "-" + ledger.runs.incrementAndGet();
			int attempt = IdempotencyContext.current().map(IdempotencyContext::getAttempt).orElse(0);
			long start = (stepped) ? SteppedStore.reachedAt() * 10_000L : ledger.now() + 10_000;
			if (stepped) {
				// The method's run is a step of its own: ticks, renewals, the other
				// instance and the operator may all act while it runs.
				this.scheduler.point(this.name, "runs the method");
				this.scheduler.point(this.name, "returns");
			}
			ledger.executions.add(new Execution(id, "", this.number, start, (stepped) ? ledger.now() : start, attempt));
			return id;
		}

		private boolean ranHere(Ledger ledger, String id) {
			return id.startsWith(this.name + "-");
		}

		@Override
		public void close() {
			this.executor.close();
			this.cache.close();
		}

	}

}
