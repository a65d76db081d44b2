package io.github.idempotent.web;

import java.net.http.HttpResponse;
import java.util.UUID;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;

import io.github.idempotent.testsupport.AbstractExactReplayTests;
import io.github.idempotent.web.WebTestApplication.Executions;

import static io.github.idempotent.testsupport.ExactReplays.post;
import static io.github.idempotent.testsupport.ExactReplays.send;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exact replays on Spring MVC: the cases of {@link AbstractExactReplayTests}, and return
 * values that only MVC writes without its converters (a primitive, a view).
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

	/**
	 * Handlers whose return value the converters do not write (a primitive, a view) store
	 * their return value as before, and replay it.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "count", "redirect" })
	void aHandlerThatIsNotWrittenByConvertersReplaysItsReturnValue(String endpoint) throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<byte[]> first = send(post(this.port(), "/exact/" + endpoint, key).build());
		HttpResponse<byte[]> replay = send(post(this.port(), "/exact/" + endpoint, key).build());
		assertThat(first.statusCode()).isIn(200, 302);
		assertThat(replay.statusCode()).isEqualTo(first.statusCode());
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.executions.count("exact-" + endpoint)).isEqualTo(1);
	}

}
