package io.github.idempotent.web;

import java.net.http.HttpResponse;
import java.util.UUID;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;

import io.github.idempotent.testsupport.AbstractReplayCustomizerTests;
import io.github.idempotent.web.WebTestApplication.Executions;

import static io.github.idempotent.testsupport.ExactReplays.post;
import static io.github.idempotent.testsupport.ExactReplays.send;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Replay customizers on Spring MVC, also for a future, a primitive and a view, whose
 * values are replayed through the codec.
 */
@Import(AbstractReplayCustomizerTests.Customizers.class)
abstract class AbstractReplayCustomizerHttpTests extends AbstractReplayCustomizerTests {

	@LocalServerPort
	private int port;

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
	@ValueSource(strings = { "future", "count", "redirect" })
	void customizersSeeReplaysOfOtherHandlers(String endpoint) throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<byte[]> first = send(post(this.port, "/exact/" + endpoint, key).build());
		HttpResponse<byte[]> replay = send(post(this.port, "/exact/" + endpoint, key).build());
		assertThat(first.headers().map()).doesNotContainKeys("x-replay-of", "x-hooks");
		assertThat(replay.statusCode()).isEqualTo(first.statusCode());
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replay.headers().firstValue("X-Replay-Key")).hasValue(key);
		assertThat(replay.headers().allValues("X-Hooks")).containsExactly("first", "second-after-first");
		assertThat(this.executions.count("exact-" + endpoint)).isEqualTo(1);
	}

}
