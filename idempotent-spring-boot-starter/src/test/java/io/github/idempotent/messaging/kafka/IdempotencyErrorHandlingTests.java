package io.github.idempotent.messaging.kafka;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.listener.ListenerExecutionFailedException;

import io.github.idempotent.core.IdempotencyException;
import io.github.idempotent.core.IdempotencyExpressionException;
import io.github.idempotent.core.IdempotencyInProgressException;
import io.github.idempotent.core.IdempotencyKeyException;
import io.github.idempotent.core.IdempotencyKeyReusedException;
import io.github.idempotent.core.IdempotencyPayloadException;
import io.github.idempotent.core.IdempotencyRecordDamagedException;
import io.github.idempotent.core.IdempotencyRequestTooLargeException;
import io.github.idempotent.core.IdempotencyResultException;
import io.github.idempotent.core.IdempotencyScopeException;
import io.github.idempotent.core.IdempotencyStoreUnavailableException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Spring Kafka classifies by type: the types the handler is given are exactly what
 * {@link IdempotencyException#findNotRetryable} finds.
 */
class IdempotencyErrorHandlingTests {

	@Test
	void theHandlerSendsStraightToTheRecovererWhatTheExceptionsSayNoRedeliveryCanFix() {
		Classifying handler = new Classifying();
		IdempotencyErrorHandling.configure(handler, Duration.ofSeconds(1));
		Duration retryAfter = Duration.ofSeconds(1);
		for (RuntimeException failure : List.of(new IdempotencyKeyReusedException("k", "op"),
				new IdempotencyKeyException("missing"), new IdempotencyPayloadException("unwritable", null),
				new IdempotencyExpressionException("#missing", null), new IdempotencyResultException("undecodable"),
				new IdempotencyRecordDamagedException("damaged", "truncated"),
				new IdempotencyInProgressException("k", "op", retryAfter),
				new IdempotencyStoreUnavailableException("op", retryAfter, new IllegalStateException("refused")),
				new IdempotencyRequestTooLargeException(10), new IdempotencyScopeException("no caller"))) {
			Exception thrown = new ListenerExecutionFailedException("Listener method threw", failure);
			assertThat(handler.retries(thrown)).as(failure.toString())
				.isEqualTo(IdempotencyException.findNotRetryable(thrown) == null);
		}
	}

	static class Classifying extends DefaultErrorHandler {

		boolean retries(Exception thrown) {
			return getExceptionMatcher().match(thrown);
		}

	}

}
