package io.github.idempotent.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which refusals a message listener of any broker retries and which it dead-letters,
 * found anywhere in the cause chain of what the listener threw.
 */
class IdempotencyExceptionTests {

	private static final Duration RETRY_AFTER = Duration.ofSeconds(1);

	private static final IdempotencyInProgressException IN_PROGRESS = new IdempotencyInProgressException("k", "op",
			RETRY_AFTER);

	private static final IdempotencyStoreUnavailableException OUTAGE = new IdempotencyStoreUnavailableException("op",
			RETRY_AFTER, new IllegalStateException("connection refused"));

	private static final List<IdempotencyException> RETRYABLE = List.of(IN_PROGRESS, OUTAGE,
			new IdempotencyStoreFullException("op", RETRY_AFTER, new IllegalStateException("OOM")),
			new IdempotencyRecordTooNewException("format 9", RETRY_AFTER));

	private static final List<RuntimeException> NOT_RETRYABLE = List.of(new IdempotencyKeyReusedException("k", "op"),
			new IdempotencyKeyException("missing"), new IdempotencyPayloadException("unwritable", null),
			new IdempotencyExpressionException("#missing", null), new IdempotencyResultException("undecodable"),
			new IdempotencyRecordDamagedException("damaged", "truncated"), new IdempotencyScopeException("no caller"));

	/** Failures a listener's container handles as it would without the starter. */
	private static final List<RuntimeException> NEITHER = List.of(new IdempotencyRequestTooLargeException(10),
			new IllegalStateException("the listener's own"));

	@Test
	void onlyRefusalsUnderWhichTheMethodDidNotRunAndThatPassAreRetryable() {
		assertThat(RETRYABLE).allMatch(IdempotencyException::isRetryable);
		assertThat(NOT_RETRYABLE).filteredOn(IdempotencyException.class::isInstance)
			.hasSize(5)
			.noneMatch((ex) -> ((IdempotencyException) ex).isRetryable());
		assertThat(new IdempotencyRequestTooLargeException(10).isRetryable()).isFalse();
	}

	@Test
	void eachIsFoundAnywhereInTheCauseChainAsWhatItIs() {
		for (IdempotencyException refusal : RETRYABLE) {
			assertThat(IdempotencyException.findRetryable(wrapped(refusal))).isSameAs(refusal);
			assertThat(IdempotencyException.findNotRetryable(wrapped(refusal))).as(refusal.toString()).isNull();
		}
		for (RuntimeException failure : NOT_RETRYABLE) {
			assertThat(IdempotencyException.findNotRetryable(wrapped(failure))).isSameAs(failure);
			assertThat(IdempotencyException.findRetryable(wrapped(failure))).as(failure.toString()).isNull();
		}
		for (RuntimeException failure : NEITHER) {
			assertThat(IdempotencyException.findRetryable(wrapped(failure))).as(failure.toString()).isNull();
			assertThat(IdempotencyException.findNotRetryable(wrapped(failure))).as(failure.toString()).isNull();
		}
		assertThat(IdempotencyException.findRetryable(null)).isNull();
		assertThat(IdempotencyException.findNotRetryable(null)).isNull();
	}

	@Test
	void aStoreOutageIsFoundBeforeADuplicateInProgressWhereverEachIs() {
		IdempotencyInProgressException nearer = new IdempotencyInProgressException("k", "op", RETRY_AFTER) {

			@Override
			public synchronized Throwable getCause() {
				return new IllegalStateException("nested", OUTAGE);
			}

		};
		assertThat(IdempotencyException.findRetryable(wrapped(nearer))).isSameAs(OUTAGE);
	}

	@Test
	void notRetryableFailuresAreFoundInAFixedOrderOfTypesNotByDepth() {
		IdempotencyKeyReusedException reused = new IdempotencyKeyReusedException("k", "op");
		RuntimeException chain = new IdempotencyResultException("undecodable",
				new IdempotencyKeyException("malformed", reused));
		assertThat(IdempotencyException.findNotRetryable(chain)).isSameAs(reused);
	}

	@Test
	void eachFinderAnswersForItsOwnKindInAChainThatHasBoth() {
		// The listeners ask for the not retryable first: a dead letter, not a requeue.
		RuntimeException chain = new IdempotencyKeyException("malformed", OUTAGE);
		assertThat(IdempotencyException.findNotRetryable(chain)).isSameAs(chain);
		assertThat(IdempotencyException.findRetryable(chain)).isSameAs(OUTAGE);
	}

	@Test
	void anAsyncListenersRequeuedFailureIsHeldBackButNotOneThatIsDeadLettered() {
		AsyncListenerFailures.Translation translation = new AsyncListenerFailures.Translation((failure) -> failure,
				Duration.ofMillis(250));
		RuntimeException inProgress = new IdempotencyInProgressException("k", "op", Duration.ofSeconds(1));
		assertThat(translation.delayOf(wrapped(inProgress))).isEqualTo(Duration.ofMillis(250));
		// A reused key found beneath it is dead-lettered: nothing to wait for.
		RuntimeException both = new IdempotencyKeyException("bad key", inProgress);
		assertThat(translation.delayOf(wrapped(both))).isZero();
		assertThat(translation.delayOf(new IllegalStateException("the listener failed"))).isZero();
	}

	private static RuntimeException wrapped(RuntimeException failure) {
		return new RuntimeException("Listener method threw", new IllegalStateException("proxy", failure));
	}

}
