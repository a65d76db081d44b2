package io.github.idempotent.store.redis;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.ResolvableType;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.idempotent.core.FailureMode;
import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.core.IdempotencyObserver;
import io.github.idempotent.core.IdempotencyPolicy;
import io.github.idempotent.core.IdempotencyResultException;
import io.github.idempotent.core.IdempotencyStoreFullException;
import io.github.idempotent.core.JacksonResultCodec;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A Redis under {@code maxmemory-policy noeviction} whose memory is full refuses writes
 * ({@code OOM command not allowed}) and evicts nothing: the safe policy, but one whose
 * refusals must not lose a result. Found by the chaos campaign: a completion refused for
 * want of memory was given up at once, the caller got its answer, and once the lease had
 * run out a retry ran the method again. Each test runs on a redis-server of its own,
 * whose {@code maxmemory} it lowers below the memory in use and raises again.
 */
class RedisMemoryPressureTests {

	private static final Fingerprint FP = new Fingerprint("fp");

	private static final String PADDING = " ".repeat(100);

	private static final String RAN_ONCE = "ran 1" + PADDING;

	private final RedisProcess redis = RedisProcess.start(RedisProcess.freePort(), false,
			"maxmemory-policy noeviction");

	private final ExecutorService callers = Executors.newCachedThreadPool();

	private final AtomicInteger runs = new AtomicInteger();

	private LettuceConnectionFactory connectionFactory;

	private IdempotencyExecutor executor;

	@BeforeEach
	void connect() {
		this.connectionFactory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", this.redis.port()));
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.executor = new IdempotencyExecutor(new RedisIdempotencyStore(this.connectionFactory), FailureMode.CLOSED,
				1024 * 1024, IdempotencyObserver.NONE);
	}

	@AfterEach
	void close() {
		this.callers.shutdownNow();
		this.executor.close();
		this.connectionFactory.destroy();
		this.redis.close();
	}

	@Test
	void aCompletionRefusedForWantOfMemoryIsStoredOnceMemoryIsFreedAndTheMethodRunsOnce() throws Exception {
		IdempotencyPolicy policy = policy(Duration.ofSeconds(1));
		String key = "idempotent-test:oom:" + UUID.randomUUID();
		CountDownLatch full = new CountDownLatch(1);
		Future<Object> first = this.callers.submit(() -> call(policy, key, () -> {
			// Memory fills up while the method runs: its claim went in, its completion
			// is refused.
			setMaxMemory("1");
			full.countDown();
			return ran();
		}));
		assertThat(full.await(10, TimeUnit.SECONDS)).isTrue();
		// Three leases of refused writes: renewals, which only extend the lease, still go
		// in, so the placeholder holds while the completion waits for memory.
		Thread.sleep(3 * policy.lease().toMillis());
		setMaxMemory("0");

		assertThat(first.get(30, TimeUnit.SECONDS)).isEqualTo(RAN_ONCE);
		assertThat(call(policy, key, () -> ran())).isEqualTo(RAN_ONCE);
		assertThat(this.runs).hasValue(1);
	}

	@ParameterizedTest
	@ValueSource(booleans = { false, true })
	void aResultRefusedUntilMaxDurationKeepsItsKeyAndTheMethodNeverRunsAgain(boolean async) throws Exception {
		// Memory stays full past the call's maxDuration: before, the owner then freed its
		// key, and once memory was freed the retry ran the method again.
		IdempotencyPolicy policy = new IdempotencyPolicy("memory-pressure", Duration.ofMinutes(5),
				Duration.ofMillis(500), Duration.ZERO, Duration.ofSeconds(1), List.of(),
				new JacksonResultCodec(new JsonMapper()).bind(ResolvableType.forClass(String.class)),
				Duration.ofMillis(1500));
		String key = "idempotent-test:oom:" + UUID.randomUUID();
		Object first;
		if (async) {
			first = this.executor.executeAsync(policy, key, new RecordKey(key), FP, () -> {
				setMaxMemory("1");
				return CompletableFuture.completedFuture(ran());
			}, null).get(30, TimeUnit.SECONDS);
		}
		else {
			first = call(policy, key, () -> {
				setMaxMemory("1");
				return ran();
			});
		}
		assertThat(first).isEqualTo(RAN_ONCE);
		for (String maxmemory : List.of("1", "0")) {
			setMaxMemory(maxmemory);
			assertThatExceptionOfType(IdempotencyResultException.class).isThrownBy(() -> call(policy, key, () -> ran()))
				.satisfies((ex) -> assertThat(ex.getDetail()).contains("its result was not stored"));
		}
		assertThat(this.runs).hasValue(1);
	}

	@Test
	void aClaimRefusedForWantOfMemoryIsTheStoreFullNotAnError() throws Exception {
		IdempotencyPolicy policy = policy(Duration.ofSeconds(1));
		setMaxMemory("1");
		try {
			assertThatExceptionOfType(IdempotencyStoreFullException.class)
				.isThrownBy(() -> call(policy, "idempotent-test:oom:" + UUID.randomUUID(), () -> ran()));
			assertThat(this.runs).hasValue(0);
		}
		finally {
			setMaxMemory("0");
		}
	}

	@Test
	void aCompletedCallReplaysWhileWritesAreRefusedEvenFailingOpenAndNeverRunsAgain() throws Exception {
		IdempotencyPolicy policy = policy(Duration.ofSeconds(1));
		String key = "idempotent-test:oom:" + UUID.randomUUID();
		assertThat(call(policy, key, () -> ran())).isEqualTo(RAN_ONCE);
		// Fail open runs a call unprotected when the store is down: a full Redis still
		// answers what it holds, so the completed call replays instead.
		try (IdempotencyExecutor failingOpen = new IdempotencyExecutor(
				new RedisIdempotencyStore(this.connectionFactory), FailureMode.OPEN, 1024 * 1024,
				IdempotencyObserver.NONE)) {
			setMaxMemory("1");
			try {
				assertThat(failingOpen.execute(policy, key, new RecordKey(key), FP, () -> ran(), null))
					.isEqualTo(RAN_ONCE);
				assertThat(failingOpen
					.executeAsync(policy, key, new RecordKey(key), FP, () -> CompletableFuture.completedFuture(ran()),
							null)
					.get(10, TimeUnit.SECONDS)).isEqualTo(RAN_ONCE);
			}
			catch (Throwable ex) {
				throw new AssertionError(ex);
			}
			finally {
				setMaxMemory("0");
			}
		}
		assertThat(this.runs).hasValue(1);
	}

	/**
	 * The result of a run, numbered: larger than a placeholder, so that a full Redis
	 * refuses it (it takes a completed record no larger than its placeholder).
	 */
	private String ran() {
		return "ran " + this.runs.incrementAndGet() + PADDING;
	}

	private Object call(IdempotencyPolicy policy, String key, IdempotencyExecutor.Invocation invocation)
			throws Exception {
		try {
			return this.executor.execute(policy, key, new RecordKey(key), FP, invocation, null);
		}
		catch (Exception | Error ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw new IllegalStateException(ex);
		}
	}

	private void setMaxMemory(String bytes) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			connection.serverCommands().setConfig("maxmemory", bytes);
		}
	}

	private static IdempotencyPolicy policy(Duration lease) {
		return new IdempotencyPolicy("memory-pressure", Duration.ofMinutes(5), lease, Duration.ZERO,
				Duration.ofSeconds(1), List.of(),
				new JacksonResultCodec(new JsonMapper()).bind(ResolvableType.forClass(String.class)));
	}

}
