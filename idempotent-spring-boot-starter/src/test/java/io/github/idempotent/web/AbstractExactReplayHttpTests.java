package io.github.idempotent.web;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;

import io.github.idempotent.testsupport.AbstractExactReplayTests;
import io.github.idempotent.web.WebTestApplication.Executions;

/**
 * Exact replays on Spring MVC, for an entity, a plain {@code Object}, text and binary,
 * and for the asynchronous return types: a {@code CompletableFuture} and a {@code Mono}.
 */
abstract class AbstractExactReplayHttpTests extends AbstractExactReplayTests {

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

	@ParameterizedTest
	@ValueSource(strings = { "future", "mono" })
	void anAsynchronousResultReplaysByteForByte(String endpoint) throws Exception {
		assertReplaysExactly(endpoint);
	}

}
