package io.github.idempotent.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;

import io.github.idempotent.chaos.ChaosChecker.Kind;
import io.github.idempotent.chaos.HeldLoad.Around;
import io.github.idempotent.chaos.HeldLoad.Disruption;
import io.github.idempotent.chaos.HeldLoad.Sample;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The held load's windows on histories written by hand, and its sender that never waits
 * for an answer.
 */
class HeldLoadTests {

	@Test
	void recoveryRunsFromTheFaultsEndUntilThroughputAndP99AreBack() {
		// 10 requests/s for 30 s, answered in 100 ms; during the fault (10 s to 12 s) no
		// answer after the 8 s timeout, then 2 s of slow answers.
		List<Sample> samples = new ArrayList<>();
		for (long due = 0; due < 30_000; due += 100) {
			boolean during = due >= 10_000 && due < 12_000;
			boolean slow = due >= 12_000 && due < 14_000;
			samples.add(new Sample(due, during ? 8_000_000 : slow ? 2_000_000 : 100_000, during ? 0 : 200,
					during ? 20 : 1));
		}
		Around around = HeldLoad.around(samples, List.of(new Disruption(Kind.STORE_RESTART, 10_000, 12_000)), 30_000)
			.get(0);
		assertThat(around.before().throughput()).isEqualTo(10.0);
		assertThat(around.before().p99()).isEqualTo(100_000);
		assertThat(around.during().throughput()).isZero();
		assertThat(around.during().statuses()).containsEntry("no answer", 20);
		assertThat(around.during().maxOutstanding()).isEqualTo(20);
		assertThat(around.after().p99()).isEqualTo(2_000_000);
		assertThat(around.recoveryMillis()).isEqualTo(2000);
	}

	@Test
	void aFaultTheLoadDidNotFeelRecoversAtOnceAndLastsAtLeastASecond() {
		List<Sample> samples = new ArrayList<>();
		for (long due = 0; due < 20_000; due += 100) {
			samples.add(new Sample(due, 100_000, 200, 1));
		}
		Around around = HeldLoad.around(samples, List.of(new Disruption(Kind.CUT, 10_000, 10_000)), 20_000).get(0);
		assertThat(around.during().due()).isEqualTo(10);
		assertThat(around.recoveryMillis()).isZero();
	}

	@Test
	void skippedRequestsCountAsLatencyBeyondAnyAnswerAndDelayTheRecovery() {
		List<Sample> samples = new ArrayList<>();
		for (long due = 0; due < 30_000; due += 100) {
			boolean skipped = due >= 10_000 && due < 11_000;
			samples.add(new Sample(due, skipped ? 0 : 100_000, skipped ? HeldLoad.SKIPPED : 200, skipped ? 50 : 1));
		}
		Around around = HeldLoad.around(samples, List.of(new Disruption(Kind.PAUSE, 9_000, 10_000)), 30_000).get(0);
		assertThat(around.after().skipped()).isEqualTo(10);
		assertThat(around.after().p99()).isEqualTo(Long.MAX_VALUE);
		assertThat(around.recoveryMillis()).isEqualTo(1000);
	}

	@Test
	void aFaultThatNeverRecoversBeforeTheNextOneSaysSo() {
		List<Sample> samples = new ArrayList<>();
		for (long due = 0; due < 30_000; due += 100) {
			samples.add(new Sample(due, (due >= 10_000) ? 5_000_000 : 100_000, 200, 1));
		}
		List<Around> around = HeldLoad.around(samples,
				List.of(new Disruption(Kind.KILL, 10_000, 11_000), new Disruption(Kind.CUT, 20_000, 20_000)), 30_000);
		assertThat(around.get(0).recovered()).isFalse();
		assertThat(around.get(0).horizonMillis()).isEqualTo(9000);
	}

	@Test
	void theLoadSkipsInsteadOfWaitingWhenAsManyAsAllowedAreOutstanding() {
		List<String> keys = new ArrayList<>();
		// Answers that never come: a stalled server.
		HeldLoad load = new HeldLoad(200, 3, "k-", 1, (key) -> {
			keys.add(key);
			return new CompletableFuture<>();
		});
		load.run(System.currentTimeMillis() + 200);
		assertThat(keys).hasSize(3);
		assertThat(load.outstanding()).isEqualTo(3);
		assertThat(load.samples()).isNotEmpty()
			.allSatisfy((sample) -> assertThat(sample.status()).isEqualTo(HeldLoad.SKIPPED));
	}

}
