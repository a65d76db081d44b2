package io.github.idempotent.core;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.store.InspectableIdempotencyStore;
import io.github.idempotent.store.InspectableIdempotencyStore.Deletion;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An {@code @Idempotent} method learns from {@link IdempotencyContext} which attempt it
 * runs: attempt 1 for the first call, and a takeover, with the start of the attempt taken
 * over, for the call that runs after an operator forced a hung call's key free. Blocking,
 * {@code CompletableFuture} and {@code Mono} methods, on the Redis and the JDBC store.
 */
class IdempotencyContextTests {

	/**
	 * The calls of a test hang one another on purpose: each runs on a thread of its own.
	 * Java 25's default async executor is the common pool even at parallelism 1 (two
	 * cores), where the hung call would hold the retry's only thread.
	 */
	private static final ExecutorService threads = Executors.newCachedThreadPool((task) -> {
		Thread thread = new Thread(task, "charges");
		thread.setDaemon(true);
		return thread;
	});

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, DataRedisAutoConfiguration.class,
				DataSourceAutoConfiguration.class, IdempotentAutoConfiguration.class,
				IdempotentAnnotationAutoConfiguration.class))
		.withBean(Charges.class);

	@Test
	void redisTellsATakeoverOnEveryKindOfMethod() {
		this.runner
			.withPropertyValues("spring.data.redis.host=" + TestRedis.host(),
					"spring.data.redis.port=" + TestRedis.port(), "idempotent.default-scope=global",
					"idempotent.store.type=redis")
			.run(IdempotencyContextTests::assertTakeoversAreTold);
	}

	@Test
	@RequiresDatabase(Database.POSTGRESQL)
	void postgreSqlTellsATakeoverOnEveryKindOfMethod() {
		String table = TestDatabases.uniqueTableName("context");
		try (var postgresql = TestDatabases.postgresql()) {
			try {
				this.runner.withBean(DataSource.class, () -> new DelegatingDataSource(postgresql))
					.withPropertyValues("idempotent.default-scope=global", "idempotent.store.type=jdbc",
							"idempotent.store.jdbc.table-name=" + table,
							"idempotent.store.jdbc.initialize-schema=always")
					.run(IdempotencyContextTests::assertTakeoversAreTold);
			}
			finally {
				new JdbcTemplate(postgresql).execute("DROP TABLE IF EXISTS " + table);
			}
		}
	}

	@Test
	void aMethodNotGuardedByAKeySeesNoContext() {
		assertThat(IdempotencyContext.current()).isEmpty();
	}

	private static void assertTakeoversAreTold(AssertableApplicationContext context) throws Exception {
		Charges charges = context.getBean(Charges.class);
		InspectableIdempotencyStore store = context.getBean(InspectableIdempotencyStore.class);
		assertTakeoverIsTold(charges, store, "charges.blocking",
				(key) -> CompletableFuture.supplyAsync(() -> charges.blocking(key), threads));
		assertTakeoverIsTold(charges, store, "charges.future", charges::future);
		assertTakeoverIsTold(charges, store, "charges.mono", (key) -> charges.mono(key).toFuture());
	}

	/**
	 * The first call hangs holding its key; an operator forces the key free; the retry
	 * runs and must be told it takes over. The hung call then returns, fenced out.
	 */
	private static void assertTakeoverIsTold(Charges charges, InspectableIdempotencyStore store, String operation,
			Function<String, CompletableFuture<String>> call) throws Exception {
		String key = UUID.randomUUID().toString();
		charges.reset();
		Instant before = Instant.now().truncatedTo(ChronoUnit.SECONDS);
		CompletableFuture<String> hung = call.apply(key);
		await().atMost(Duration.ofSeconds(10)).until(() -> charges.seen().size() == 1);
		Instant after = Instant.now();
		RecordKey recordKey = RecordKey.of("idempotent", "test", operation, key, store.maxKeyLength());
		assertThat(store.deleteInProgress(recordKey)).isEqualTo(Deletion.DELETED);

		assertThat(call.apply(key).get(10, TimeUnit.SECONDS)).isEqualTo("charged " + key + " #2");
		charges.release();
		assertThat(hung.get(10, TimeUnit.SECONDS)).isEqualTo("charged " + key + " #1");

		IdempotencyContext first = charges.seen().get(0).orElseThrow();
		assertThat(first.getOperation()).isEqualTo(operation);
		assertThat(first.getKey()).isEqualTo(key);
		assertThat(first.getAttempt()).isOne();
		assertThat(first.isTakeover()).isFalse();
		assertThat(first.getPreviousAttemptStartedAt()).isEmpty();
		IdempotencyContext takeover = charges.seen().get(1).orElseThrow();
		assertThat(takeover.getAttempt()).as(operation).isEqualTo(2);
		assertThat(takeover.isTakeover()).isTrue();
		assertThat(takeover.isDuplicate()).isFalse();
		assertThat(takeover.getPreviousAttemptStartedAt()).get().satisfies((started) -> {
			assertThat(started).isBetween(before, after);
		});
		// The retry's result is the one stored: the hung call's completion is fenced.
		assertThat(call.apply(key).get(10, TimeUnit.SECONDS)).isEqualTo("charged " + key + " #2");
		assertThat(charges.seen()).hasSize(2);
	}

	static class Charges {

		private final List<Optional<IdempotencyContext>> seen = new CopyOnWriteArrayList<>();

		private final AtomicInteger calls = new AtomicInteger();

		private volatile CountDownLatch hang = new CountDownLatch(1);

		// Public: the test calls the bean through its proxy, whose own fields are unset.
		public List<Optional<IdempotencyContext>> seen() {
			return this.seen;
		}

		public void release() {
			this.hang.countDown();
		}

		public void reset() {
			this.seen.clear();
			this.calls.set(0);
			this.hang = new CountDownLatch(1);
		}

		@Idempotent(name = "charges.blocking", key = "#key", scope = "'test'")
		public String blocking(String key) {
			this.seen.add(IdempotencyContext.current());
			return charge(key);
		}

		@Idempotent(name = "charges.future", key = "#key", scope = "'test'")
		public CompletableFuture<String> future(String key) {
			// Read on the calling thread, before the work moves to another one.
			this.seen.add(IdempotencyContext.current());
			return CompletableFuture.supplyAsync(() -> charge(key), threads);
		}

		@Idempotent(name = "charges.mono", key = "#key", scope = "'test'")
		public Mono<String> mono(String key) {
			return Mono.deferContextual((context) -> {
				this.seen.add(context.getOrEmpty(IdempotencyContext.REACTOR_CONTEXT_KEY));
				return Mono.fromFuture(CompletableFuture.supplyAsync(() -> charge(key), threads));
			});
		}

		private String charge(String key) {
			int call = this.calls.incrementAndGet();
			if (call == 1) {
				try {
					this.hang.await(30, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
			return "charged " + key + " #" + call;
		}

	}

}
