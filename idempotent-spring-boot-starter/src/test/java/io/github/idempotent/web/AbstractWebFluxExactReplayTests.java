package io.github.idempotent.web;

import org.junit.jupiter.api.BeforeEach;

import org.springframework.beans.factory.annotation.Autowired;

import io.github.idempotent.testsupport.AbstractExactReplayTests;
import io.github.idempotent.web.WebFluxTestApplication.Executions;

/**
 * Exact replays on WebFlux: the cases of {@link AbstractExactReplayTests}, each endpoint
 * returning a {@code Mono}, but for {@code /exact/future} (a {@code CompletableFuture}).
 */
abstract class AbstractWebFluxExactReplayTests extends AbstractExactReplayTests {

	@Autowired
	private Executions executions;

	@BeforeEach
	void reset() {
		this.executions.reset();
	}

	@Override
	protected int runs(String counter) {
		return this.executions.count(counter);
	}

}
