package io.github.idempotent.chaos;

import java.time.Duration;
import java.util.EnumSet;

import org.junit.jupiter.api.Test;

import io.github.idempotent.chaos.ChaosChecker.Kind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The short form of the chaos campaign, in the test command: 30 s on a Redis of its own
 * with 2 instances, a random seed printed at the start (replay it with
 * {@code -Dchaos.seed=...}). Every {@code chaos.*} system property of
 * {@link ChaosCampaign.Config} applies, which is how {@code benchmarks/run-chaos.sh} runs
 * the long form.
 * <p>
 * Every fault kind of a standalone Redis is in the short form; only the failovers need
 * the Sentinel or Cluster form ({@code -Dchaos.store=sentinel} or {@code cluster}).
 */
class ChaosCampaignTests {

	static final EnumSet<Kind> SHORT_FORM = EnumSet.of(Kind.CUT, Kind.STALL, Kind.STALL_PAST_LEASE, Kind.PAUSE,
			Kind.PAUSE_PAST_LEASE, Kind.KILL, Kind.FORCE_DELETE, Kind.STORE_RESTART, Kind.MEMORY_PRESSURE);

	@Test
	void everyKeyRanOnceUnlessAnAllowedFaultExcusesTheReRun() throws Exception {
		ChaosCampaign.Config config = ChaosCampaign.Config.fromSystemProperties("redis", Duration.ofSeconds(30),
				SHORT_FORM);
		// The campaign restarts its own redis-server, so it needs the machine's (Redis 7
		// on CI); without one it is skipped, except on CI.
		assumeTrue(System.getenv("CI") != null || config.store().equals("postgres") || onPath("redis-server"),
				"redis-server is not on the PATH");
		ChaosCampaign.Result result = new ChaosCampaign(config).run();
		assertThat(result.verdict().executions()).as("executions").isPositive();
		assertThat(result.verdict().violations()).as("violations, seed " + config.seed()).isEmpty();
	}

	private static boolean onPath(String command) {
		String path = System.getenv("PATH");
		return path != null && java.util.Arrays.stream(path.split(java.io.File.pathSeparator))
			.anyMatch((directory) -> java.nio.file.Files.isExecutable(java.nio.file.Path.of(directory, command)));
	}

}
