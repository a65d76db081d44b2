package io.github.idempotent.chaos;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.idempotent.chaos.ChaosChecker.Answer;
import io.github.idempotent.chaos.ChaosChecker.Execution;
import io.github.idempotent.chaos.ChaosChecker.Fault;
import io.github.idempotent.chaos.ChaosChecker.Kind;
import io.github.idempotent.chaos.ChaosChecker.Probe;
import io.github.idempotent.chaos.ChaosChecker.Verdict;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The checker on histories written by hand: it must find what the campaign is there to
 * find, and excuse only what the guarantees allow.
 */
class ChaosCheckerTests {

	private final ChaosChecker checker = new ChaosChecker(2000);

	@Test
	void aReRunWithNoFaultIsAViolation() {
		Verdict verdict = this.checker.check(
				List.of(new Execution("a", "k", 0, 1000, 1200L), new Execution("b", "k", 1, 1100, 1300L)), List.of(),
				List.of(new Answer("k", "a", 0, 1200, false)), List.of(new Probe("k", 200, "a", 9000)), List.of());
		assertThat(verdict.violations()).hasSize(1).first().asString().contains("re-run not excused");
	}

	@Test
	void aReRunAfterTheInstanceRunningTheFirstWasKilledIsExcused() {
		Verdict verdict = this.checker.check(
				List.of(new Execution("a", "k", 0, 1000, null), new Execution("b", "k", 1, 4000, 4200L)),
				List.of(new Fault(Kind.KILL, 0, null, 1100, 1100, true, "")),
				List.of(new Answer("k", "b", 1, 4200, false)), List.of(new Probe("k", 200, "b", 9000)), List.of());
		assertThat(verdict.violations()).isEmpty();
		assertThat(verdict.excused()).containsEntry("crash mid-call (SIGKILL)", 1);
	}

	@Test
	void aReRunAfterACrashThatWasNotToldItTookOverIsAViolation() {
		Fault kill = new Fault(Kind.KILL, 0, null, 1100, 1100, true, "");
		Verdict untold = this.checker.check(
				List.of(new Execution("a", "k", 0, 1000, null, 1), new Execution("b", "k", 1, 4000, 4200L, 1)),
				List.of(kill), List.of(new Answer("k", "b", 1, 4200, false)), List.of(new Probe("k", 200, "b", 9000)),
				List.of());
		assertThat(untold.violations()).hasSize(1).first().asString().contains("was told it was attempt 1");
		Verdict told = this.checker.check(
				List.of(new Execution("a", "k", 0, 1000, null, 1), new Execution("b", "k", 1, 4000, 4200L, 2)),
				List.of(kill), List.of(new Answer("k", "b", 1, 4200, false)), List.of(new Probe("k", 200, "b", 9000)),
				List.of());
		assertThat(told.violations()).isEmpty();
		Verdict storeRestarted = this.checker.check(
				List.of(new Execution("a", "k", 0, 1000, null, 1), new Execution("b", "k", 1, 4000, 4200L, 1)),
				List.of(kill, new Fault(Kind.STORE_RESTART, -1, null, 2000, 2500, true, "")),
				List.of(new Answer("k", "b", 1, 4200, false)), List.of(new Probe("k", 200, "b", 9000)), List.of());
		assertThat(storeRestarted.violations()).isEmpty();
	}

	@Test
	void aKillOfAnotherInstanceOrMemoryPressureExcusesNothing() {
		Verdict verdict = this.checker.check(
				List.of(new Execution("a", "k", 0, 1000, 1500L), new Execution("b", "k", 1, 4000, 4200L)),
				List.of(new Fault(Kind.KILL, 1, null, 1100, 1100, true, ""),
						new Fault(Kind.MEMORY_PRESSURE, -1, null, 900, 5000, true, "")),
				List.of(), List.of(new Probe("k", 200, "b", 9000)), List.of());
		assertThat(verdict.violations()).hasSize(1);
	}

	@Test
	void aPausePastTheLeaseExcusesATakeOverAndItsDifferentAnswer() {
		Verdict verdict = this.checker.check(
				List.of(new Execution("a", "k", 0, 1000, 6000L), new Execution("b", "k", 1, 4000, 4200L)),
				List.of(new Fault(Kind.PAUSE_PAST_LEASE, 0, null, 1100, 5900, true, "")),
				List.of(new Answer("k", "a", 0, 6000, false), new Answer("k", "b", 1, 4200, false)),
				List.of(new Probe("k", 200, "b", 9000)), List.of());
		assertThat(verdict.violations()).isEmpty();
		assertThat(verdict.excused()).containsEntry("paused past the lease, taken over", 1);
	}

	@Test
	void aTakeOverRightAfterAPausedOwnerEndedIsExcused() {
		// Found by the campaign (PostgreSQL, seed 2830374012): the owner's method ended
		// as
		// the pause did, a retry queued on the same instance claimed the expired record
		// before the owner's completion reached the store.
		Verdict verdict = this.checker.check(
				List.of(new Execution("a", "k", 0, 1000, 5000L), new Execution("b", "k", 0, 5055, 5100L)),
				List.of(new Fault(Kind.PAUSE_PAST_LEASE, 0, null, 1400, 5003, true, "")),
				List.of(new Answer("k", "a", 0, 5010, false)), List.of(new Probe("k", 200, "b", 9000)), List.of());
		assertThat(verdict.violations()).isEmpty();
		assertThat(verdict.excused()).containsEntry("paused past the lease, taken over", 1);
	}

	@Test
	void aTakeOverWhileTheOwnersCompletionWasHeldByAStallPastTheLeaseIsExcused() {
		// Found by the campaign (Redis, seed 2874559805): the method returned during the
		// stall, its completion waited in the proxy, another instance claimed the key
		// once the lease ran out.
		Verdict verdict = this.checker.check(
				List.of(new Execution("a", "k", 1, 1257, 1601L), new Execution("b", "k", 0, 4945, 5033L)),
				List.of(new Fault(Kind.STALL_PAST_LEASE, 1, null, 1495, 5494, true, "")),
				List.of(new Answer("k", "a", 1, 1610, false)), List.of(new Probe("k", 200, "b", 9000)), List.of());
		assertThat(verdict.violations()).isEmpty();
		assertThat(verdict.excused()).containsEntry("store connection stalled past the lease, taken over", 1);
	}

	@Test
	void aStoreRestartThatOutlastsTheLeaseFromTheLastRenewalExcusesATakeOver() {
		// Found by the campaign (PostgreSQL at REPEATABLE READ, seed 3180130962): claimed
		// 413 ms before a restart of 1 566 ms, its first renewal due during it, the lease
		// (2 s) ran out 21 ms after the store was back, before a renewal got through.
		Verdict verdict = this.checker.check(
				List.of(new Execution("a", "k", 0, 1868, 4871L), new Execution("b", "k", 1, 4061, 4426L)),
				List.of(new Fault(Kind.STORE_RESTART, -1, null, 2281, 3847, true, "")),
				List.of(new Answer("k", "a", 0, 4880, false), new Answer("k", "b", 1, 4430, false)),
				List.of(new Probe("k", 200, "b", 9000)), List.of());
		assertThat(verdict.violations()).isEmpty();
		assertThat(verdict.excused()).containsEntry("store down past the lease, taken over", 1);
		// A restart shorter than two thirds of the lease leaves a renewal time to get
		// through: no excuse.
		assertThat(this.checker
			.check(List.of(new Execution("a", "k", 0, 1868, 4871L), new Execution("b", "k", 1, 4061, 4426L)),
					List.of(new Fault(Kind.STORE_RESTART, -1, null, 2281, 3481, true, "")),
					List.of(new Answer("k", "a", 0, 4880, false), new Answer("k", "b", 1, 4430, false)),
					List.of(new Probe("k", 200, "b", 9000)), List.of())
			.violations()).isNotEmpty();
	}

	@Test
	void aResultRefusedUnderMemoryPressureIsNotExcused() {
		// Found by the campaign (Redis, seed 2874559805): under noeviction and a full
		// memory, the completion was refused (OOM), the caller had its answer, and a
		// retry ran the method again once the lease ran out.
		Verdict verdict = this.checker.check(
				List.of(new Execution("a", "k", 1, 1753, 1987L), new Execution("b", "k", 1, 3985, 4354L)),
				List.of(new Fault(Kind.MEMORY_PRESSURE, -1, null, 0, 2124, true, "")),
				List.of(new Answer("k", "a", 1, 1990, false)), List.of(new Probe("k", 200, "b", 9000)), List.of());
		assertThat(verdict.violations()).hasSize(2);
	}

	@Test
	void aResultRefusedPastMaxDurationMayAnswerNotStoredButNeverRunAgain() {
		Fault full = new Fault(Kind.MEMORY_PRESSURE_PAST_MAX_DURATION, -1, null, 1500, 10_000, true, "");
		List<Answer> answered = List.of(new Answer("k", "a", 1, 8000, false));
		assertThat(this.checker
			.check(List.of(new Execution("a", "k", 1, 1000, 2000L)), List.of(full), answered,
					List.of(new Probe("k", 500, ChaosChecker.NOT_STORED, 12_000)), List.of())
			.violations()).isEmpty();
		// Not stored with no memory full past max-duration: the result was lost.
		assertThat(this.checker
			.check(List.of(new Execution("a", "k", 1, 1000, 2000L)), List.of(), answered,
					List.of(new Probe("k", 500, ChaosChecker.NOT_STORED, 12_000)), List.of())
			.violations()).singleElement().asString().contains("not stored");
		// Run again after it: no excuse.
		assertThat(this.checker
			.check(List.of(new Execution("a", "k", 1, 1000, 2000L), new Execution("b", "k", 0, 11_000, 11_100L)),
					List.of(full), answered, List.of(new Probe("k", 200, "b", 12_000)), List.of())
			.violations()).isNotEmpty();
	}

	@Test
	void aResultNotStoredDuringAFailoverIsExcusedEvenWithWaitReplicas() {
		// Found by the campaign (Sentinel, wait-replicas=1, seed 3178237901): the method
		// returned while the primary was down, before the replica was promoted.
		Verdict verdict = new ChaosChecker(2000, 1).check(
				List.of(new Execution("a", "k", 0, 3527, 3911L), new Execution("b", "k", 1, 6425, 9426L)),
				List.of(new Fault(Kind.FAILOVER, -1, null, 3605, 5800, true, "")),
				List.of(new Answer("k", "a", 0, 3920, false)), List.of(new Probe("k", 200, "b", 12000)), List.of());
		assertThat(verdict.violations()).isEmpty();
		assertThat(verdict.excused()).containsEntry("result not stored (store down when the method returned)", 1);
		assertThat(verdict.failoverLossMillis()).isEqualTo(-1);
	}

	@Test
	void aFailoverWithoutWaitReplicasExcusesAWriteLostJustBeforeTheCrash() {
		Verdict lost = new ChaosChecker(2000, 0).check(
				List.of(new Execution("a", "k", 0, 1500, 2000L), new Execution("b", "k", 1, 6425, 6600L)),
				List.of(new Fault(Kind.FAILOVER, -1, null, 3605, 5800, true, "")),
				List.of(new Answer("k", "a", 0, 2020, false)), List.of(new Probe("k", 200, "b", 12000)), List.of());
		assertThat(lost.violations()).isEmpty();
		assertThat(lost.failoverLossMillis()).isEqualTo(1605);
		Verdict fenced = new ChaosChecker(2000, 1).check(
				List.of(new Execution("a", "k", 0, 1500, 2000L), new Execution("b", "k", 1, 6425, 6600L)),
				List.of(new Fault(Kind.FAILOVER, -1, null, 3605, 5800, true, "")),
				List.of(new Answer("k", "a", 0, 2020, false)), List.of(new Probe("k", 200, "b", 12000)), List.of());
		assertThat(fenced.violations()).isNotEmpty();
	}

	@Test
	void aClusterFailoverExcusesALostWriteOnlyForTheKeysOfTheKilledPrimary() {
		// On a Cluster only the slots of the killed primary fail over: a key on another
		// primary lost nothing, and its re-run is a violation.
		Fault failover = new Fault(Kind.CLUSTER_FAILOVER, -1, null, 3605, 5800, true,
				"primary 30001 killed (slots 0-5460)");
		ChaosChecker checker = new ChaosChecker(2000, 0, (fault, key) -> key.equals("on-killed"));
		Verdict verdict = checker.check(List.of(new Execution("a", "on-killed", 0, 1500, 2000L),
				new Execution("b", "on-killed", 1, 6425, 6600L), new Execution("c", "elsewhere", 0, 1500, 2000L),
				new Execution("d", "elsewhere", 1, 6425, 6600L)), List.of(failover), List.of(),
				List.of(new Probe("on-killed", 200, "b", 12000), new Probe("elsewhere", 200, "d", 12000)), List.of());
		assertThat(verdict.excused()).containsEntry("failover lost a write (no wait-replicas)", 1);
		assertThat(verdict.failoverLossMillis()).isEqualTo(1605);
		assertThat(verdict.violations()).singleElement().asString().startsWith("key elsewhere:");
	}

	@Test
	void aForcedDeleteExcusesOneReRunAfterIt() {
		Verdict verdict = this.checker.check(
				List.of(new Execution("a", "k", 0, 1000, 3000L), new Execution("b", "k", 1, 2000, 2200L),
						new Execution("c", "k", 1, 2500, 2700L)),
				List.of(new Fault(Kind.FORCE_DELETE, -1, "k", 1500, 1500, true, "")), List.of(),
				List.of(new Probe("k", 200, "c", 9000)), List.of());
		assertThat(verdict.excused()).containsEntry("forced delete", 1);
		assertThat(verdict.violations()).hasSize(1);
	}

	@Test
	void aForcedDeleteThatHitsTheClaimBeforeTheMethodLogsItsStartExcusesTheReRun() {
		// Seen in the short form: the delete began 9 ms before the START line, between
		// the claim and the method.
		Verdict verdict = this.checker.check(
				List.of(new Execution("a", "k", 0, 1009, 1300L), new Execution("b", "k", 1, 1450, 1600L)),
				List.of(new Fault(Kind.FORCE_DELETE, -1, "k", 1000, 1050, true, "")), List.of(),
				List.of(new Probe("k", 200, "b", 9000)), List.of());
		assertThat(verdict.excused()).containsEntry("forced delete", 1);
		assertThat(verdict.violations()).isEmpty();
		Verdict before = this.checker.check(
				List.of(new Execution("a", "k", 0, 1100, 1300L), new Execution("b", "k", 1, 1450, 1600L)),
				List.of(new Fault(Kind.FORCE_DELETE, -1, "k", 1000, 1050, true, "")), List.of(),
				List.of(new Probe("k", 200, "b", 9000)), List.of());
		assertThat(before.violations()).isNotEmpty();
	}

	@Test
	void differentAnswersWithoutAnExcuseAndAKeyInProgressAfterTheHealAreViolations() {
		Verdict verdict = this.checker.check(List.of(new Execution("a", "k", 0, 1000, 1200L)), List.of(),
				List.of(new Answer("k", "a", 0, 1200, false), new Answer("k", "x", 1, 1300, true)),
				List.of(new Probe("k", 409, null, 9000)), List.of("idempotent:_:chaos:k"));
		assertThat(verdict.violations()).hasSize(3);
		assertThat(String.join("\n", verdict.violations())).contains("which no ledger holds")
			.contains("in progress")
			.contains("still in progress in the store");
	}

	@Test
	void aReRunAtTheFinalProbeIsALostResult() {
		Verdict verdict = this.checker.check(
				List.of(new Execution("a", "k", 0, 1000, 1200L), new Execution("b", "k", 0, 9001, 9100L)), List.of(),
				List.of(new Answer("k", "a", 0, 1200, false), new Answer("k", "b", 0, 9100, false)),
				List.of(new Probe("k", 200, "b", 9000)), List.of());
		assertThat(verdict.violations())
			.anySatisfy((violation) -> assertThat(violation).contains("completed result was lost"));
	}

}
