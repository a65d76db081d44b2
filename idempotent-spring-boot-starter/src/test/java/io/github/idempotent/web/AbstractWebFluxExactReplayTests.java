package io.github.idempotent.web;

import org.junit.jupiter.api.BeforeEach;

import org.springframework.beans.factory.annotation.Autowired;

import io.github.idempotent.testsupport.AbstractExactReplayTests;
import io.github.idempotent.web.WebFluxTestApplication.Executions;

/**
 * Exact replays on WebFlux, for a {@code Mono} of an entity, of a plain {@code Object},
 * of text and of bytes.
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
