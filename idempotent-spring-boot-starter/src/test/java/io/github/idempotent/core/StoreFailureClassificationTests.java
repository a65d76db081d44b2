package io.github.idempotent.core;

import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import java.sql.SQLTransactionRollbackException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.ResolvableType;
import org.redisson.client.RedisOutOfMemoryException;
import org.redisson.client.RedisReadonlyException;
import redis.clients.jedis.exceptions.JedisDataException;

import org.springframework.dao.CannotAcquireLockException;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.dao.InvalidDataAccessApiUsageException;
import org.springframework.dao.PessimisticLockingFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;

import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.StoreFullException;
import io.github.idempotent.store.StoredResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Which store failures count as "the store is unavailable" (503 when failing closed, an
 * unprotected run when failing open), with the exceptions Spring's Redis and JDBC support
 * really throw: only failures to reach the store. A failure of the data or of the code
 * propagates as it is and never runs the method unprotected.
 */
class StoreFailureClassificationTests {

	private final AtomicInteger runs = new AtomicInteger();

	private IdempotencyExecutor executor;

	@AfterEach
	void close() {
		if (this.executor != null) {
			this.executor.close();
		}
	}

	@Test
	void connectivityFailuresRunTheMethodUnprotectedWhenFailingOpen() throws Throwable {
		for (RuntimeException failure : List.of(new RedisConnectionFailureException("connection refused"),
				new QueryTimeoutException("Redis command timed out"),
				new CannotGetJdbcConnectionException("pool exhausted", new SQLTransientConnectionException()))) {
			assertThat(execute(FailureMode.OPEN, failure)).as(failure.toString()).isEqualTo("ran");
		}
		assertThat(this.runs).hasValue(3);
	}

	@Test
	void connectivityFailuresAreUnavailableWhenFailingClosed() {
		assertThatExceptionOfType(IdempotencyStoreUnavailableException.class)
			.isThrownBy(() -> execute(FailureMode.CLOSED, new RedisConnectionFailureException("connection refused")));
		assertThat(this.runs).hasValue(0);
	}

	@Test
	void aFullOrReadOnlyRedisIsUnavailableOnJedisAndRedissonToo() {
		// As Spring Data Redis translates them: an error reply becomes an
		// InvalidDataAccessApiUsageException around the client's own exception.
		String oom = "OOM command not allowed when used memory > 'maxmemory'.";
		String readOnly = "READONLY You can't write against a read only replica.";
		for (RuntimeException failure : List.of(
				new InvalidDataAccessApiUsageException(oom, new JedisDataException(oom)),
				new InvalidDataAccessApiUsageException(readOnly, new JedisDataException(readOnly)),
				new InvalidDataAccessApiUsageException(oom, new RedisOutOfMemoryException(oom)),
				new InvalidDataAccessApiUsageException(readOnly, new RedisReadonlyException(readOnly)))) {
			assertThatExceptionOfType(IdempotencyStoreUnavailableException.class).as(failure.getCause().toString())
				.isThrownBy(() -> execute(FailureMode.CLOSED, failure));
		}
		String syntax = "ERR syntax error";
		assertThatExceptionOfType(InvalidDataAccessApiUsageException.class).isThrownBy(() -> execute(FailureMode.OPEN,
				new InvalidDataAccessApiUsageException(syntax, new JedisDataException(syntax))));
		assertThat(this.runs).hasValue(0);
	}

	@Test
	void contentionIsNoOutageAndNeverRunsTheMethodEvenWhenFailingOpen() {
		// By the SPI contention is an answer (the JDBC store gives one): one that is
		// thrown all the same is no sign that the store cannot be reached.
		for (RuntimeException failure : List.of(new PessimisticLockingFailureException("could not serialize access"),
				new CannotAcquireLockException("lock wait timeout",
						new SQLTransactionRollbackException("Lock wait timeout exceeded", "40001", 1205)))) {
			assertThatExceptionOfType(failure.getClass()).as(failure.toString())
				.isThrownBy(() -> execute(FailureMode.OPEN, failure));
		}
		assertThat(this.runs).hasValue(0);
	}

	@Test
	void dataAndCodeFailuresPropagateAndNeverRunTheMethodEvenWhenFailingOpen() {
		DataIntegrityViolationException data = new DataIntegrityViolationException("value too long for column");
		assertThatExceptionOfType(DataIntegrityViolationException.class)
			.isThrownBy(() -> execute(FailureMode.OPEN, data));
		RedisSystemException script = new RedisSystemException("ERR Error running script", null);
		assertThatExceptionOfType(RedisSystemException.class).isThrownBy(() -> execute(FailureMode.OPEN, script));
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> execute(FailureMode.CLOSED, new IllegalStateException("a bug")));
		assertThat(this.runs).hasValue(0);
	}

	@Test
	void aRefusalOfAFullOrFailingOverRedisIsUnavailableButOnlyAFullOneIsFull() {
		String oom = "OOM command not allowed when used memory > 'maxmemory'.";
		assertThat(StoreFailureClassifier.isFull(new JedisDataException(oom))).isTrue();
		assertThat(StoreFailureClassifier.isUnavailable(new JedisDataException(oom))).isTrue();
		assertThat(StoreFailureClassifier.isFull(new StoreFullException("no room"))).isTrue();
		assertThat(StoreFailureClassifier.isUnavailable(new StoreFullException("no room"))).isTrue();
		for (String refusal : List.of("READONLY You can't write against a read only replica.",
				"MASTERDOWN Link with MASTER is down", "NOREPLICAS Not enough good replicas to write.",
				"TRYAGAIN Multiple keys request during rehashing of slot", "CLUSTERDOWN The cluster is down",
				"LOADING Redis is loading the dataset in memory", "BUSY Redis is busy running a script.")) {
			assertThat(StoreFailureClassifier.isUnavailable(new JedisDataException(refusal))).as(refusal).isTrue();
			assertThat(StoreFailureClassifier.isFull(new JedisDataException(refusal))).as(refusal).isFalse();
		}
	}

	@Test
	void aRefusalWrappedByAScriptIsReadAsTheRefusal() {
		// Redis 6 reports a refusal inside a script as "-OOM ..." within its own error.
		String inScript = "ERR Error running script (call to f_1a2b): @user_script:1: "
				+ "@user_script: 1: -OOM command not allowed when used memory > 'maxmemory'.";
		assertThat(StoreFailureClassifier.isFull(new JedisDataException(inScript))).isTrue();
		String readOnlyInScript = "ERR Error running script: @user_script:1: -READONLY You can't write";
		assertThat(StoreFailureClassifier.isUnavailable(new JedisDataException(readOnlyInScript))).isTrue();
		assertThat(StoreFailureClassifier.isFull(new JedisDataException(readOnlyInScript))).isFalse();
	}

	@Test
	void anErrorReplyThatIsNoRefusalOrHasNoMessageIsNoOutage() {
		for (JedisDataException reply : List.of(new JedisDataException("ERR syntax error"),
				new JedisDataException("WRONGTYPE Operation against a key holding the wrong kind of value"),
				new JedisDataException("ERR unknown command 'OOM'"), new JedisDataException((String) null))) {
			assertThat(StoreFailureClassifier.isUnavailable(reply)).as(String.valueOf(reply.getMessage())).isFalse();
			assertThat(StoreFailureClassifier.isFull(reply)).isFalse();
		}
		// The same words from anything but a Redis client's error reply are no refusal.
		assertThat(StoreFailureClassifier.isUnavailable(new IllegalStateException("READONLY replica"))).isFalse();
		assertThat(StoreFailureClassifier.isFull(new IllegalStateException("OOM command not allowed"))).isFalse();
	}

	@Test
	void anOutageIsFoundInAnyCauseAndBySuperclassName() {
		assertThat(StoreFailureClassifier.isUnavailable(new IllegalStateException("wrapped",
				new RuntimeException("again", new java.net.SocketTimeoutException("read timed out")))))
			.isTrue();
		assertThat(StoreFailureClassifier.isUnavailable(new java.util.concurrent.TimeoutException("no answer")))
			.isTrue();
		assertThat(StoreFailureClassifier.isUnavailable(
				new IdempotencyStoreUnavailableException("claim", Duration.ofSeconds(1), new IllegalStateException())))
			.isTrue();
		// Matched by name through the superclasses: a subclass of a listed type counts.
		assertThat(StoreFailureClassifier.isUnavailable(new QueryTimeoutException("timed out") {
		})).isTrue();
		assertThat(StoreFailureClassifier.isUnavailable(new SQLTransientConnectionException("pool"))).isTrue();
		assertThat(StoreFailureClassifier.isFull(new IllegalStateException("wrapped", new StoreFullException("full"))))
			.isTrue();
		assertThat(StoreFailureClassifier.isUnavailable(new IllegalStateException("a bug", new RuntimeException())))
			.isFalse();
	}

	@Test
	void aFailureThatIsItsOwnCauseEndsTheSearch() {
		RuntimeException selfCaused = new RuntimeException("loop") {

			@Override
			public synchronized Throwable getCause() {
				return this;
			}

		};
		assertThat(StoreFailureClassifier.isUnavailable(selfCaused)).isFalse();
		assertThat(StoreFailureClassifier.isFull(selfCaused)).isFalse();
	}

	private Object execute(FailureMode mode, RuntimeException failure) throws Throwable {
		if (this.executor != null) {
			this.executor.close();
		}
		this.executor = new IdempotencyExecutor(new FailingStore(failure), mode, 1024, IdempotencyObserver.NONE);
		IdempotencyPolicy policy = new IdempotencyPolicy("op", Duration.ofMinutes(1), Duration.ofSeconds(30),
				Duration.ZERO, Duration.ofSeconds(1), List.of(),
				new JacksonResultCodec(new JsonMapper()).bind(ResolvableType.forClass(String.class)));
		return this.executor.execute(policy, "k", new RecordKey("test:k"), new Fingerprint("fp"), () -> {
			this.runs.incrementAndGet();
			return "ran";
		}, null);
	}

	/**
	 * A store whose every call fails as a real client's would: this tests the executor's
	 * reading of the failure, not a store.
	 */
	private record FailingStore(RuntimeException failure) implements IdempotencyStore {

		@Override
		public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
			throw this.failure;
		}

		@Override
		public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result,
				Duration ttl) {
			throw this.failure;
		}

		@Override
		public boolean release(RecordKey key, String token) {
			throw this.failure;
		}

		@Override
		public boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease) {
			throw this.failure;
		}

	}

}
