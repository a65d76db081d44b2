package io.github.idempotent.store.jdbc;

import java.sql.Timestamp;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.IdempotentAnnotationAutoConfiguration;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.core.IdempotencyInProgressException;
import io.github.idempotent.testsupport.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * {@code join-transaction=true} at every isolation level of one database, through an
 * {@code @Idempotent} bean called inside a {@link TransactionTemplate}: whatever the
 * level, the method runs once, a retry after the commit replays, and no key is left in
 * progress. The hard cases are a caller's snapshot taken before the claim committed (on
 * its own connection), a lease renewal committed after that snapshot, and the same key
 * claimed twice in one transaction.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractJoinTransactionIsolationTests {

	private HikariDataSource pool;

	private String recordTable;

	private String orderTable;

	private JdbcTemplate jdbc;

	protected abstract HikariDataSource createDataSource();

	protected abstract JdbcDialect dialect();

	/**
	 * The isolation levels the database distinguishes, and its default.
	 */
	protected abstract List<Integer> isolationLevels();

	@BeforeAll
	void createTables() {
		this.pool = createDataSource();
		this.recordTable = TestDatabases.uniqueTableName("idem_iso");
		this.orderTable = TestDatabases.uniqueTableName("orders_iso");
		this.jdbc = new JdbcTemplate(this.pool);
		for (String statement : dialect().schema(this.recordTable).split(";")) {
			if (!statement.replaceAll("(?m)^--.*$", "").isBlank()) {
				this.jdbc.execute(statement);
			}
		}
		this.jdbc.execute("CREATE TABLE " + this.orderTable + " (order_no VARCHAR(64) PRIMARY KEY)");
	}

	@AfterAll
	void dropTables() {
		try {
			this.jdbc.execute("DROP TABLE IF EXISTS " + this.recordTable);
			this.jdbc.execute("DROP TABLE IF EXISTS " + this.orderTable);
		}
		finally {
			this.pool.close();
		}
	}

	private ApplicationContextRunner contextRunner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotentAutoConfiguration.class,
					IdempotentAnnotationAutoConfiguration.class))
			// not the pool itself: each context would close it
			.withBean(DataSource.class, () -> new DelegatingDataSource(this.pool))
			.withBean(Orders.class,
					() -> new Orders(this.orderTable, this.recordTable, new JdbcTemplate(this.pool), dialect()))
			.withUserConfiguration(TransactionConfiguration.class)
			.withPropertyValues("idempotent.store.type=jdbc", "idempotent.store.jdbc.table-name=" + this.recordTable,
					"idempotent.store.jdbc.initialize-schema=never", "idempotent.store.jdbc.purge-interval=0",
					"idempotent.store.jdbc.join-transaction=true", "idempotent.default-scope=global");
	}

	@ParameterizedTest(name = "isolation {0}")
	@MethodSource("isolationLevels")
	void aSnapshotTakenBeforeTheClaimStillStoresTheResult(int isolation) {
		contextRunner().run((context) -> {
			Orders orders = context.getBean(Orders.class);
			String orderNo = UUID.randomUUID().toString();
			transactions(context, isolation).executeWithoutResult((status) -> {
				// The caller reads first, as a service does: its snapshot predates the
				// claim, which the store commits on a connection of its own.
				orders.count();
				assertThat(orders.place(orderNo)).isEqualTo("order " + orderNo);
			});
			assertRanOnceAndReplays(orders, orderNo);
		});
	}

	@ParameterizedTest(name = "isolation {0}")
	@MethodSource("isolationLevels")
	void aRenewalCommittedAfterTheSnapshotStillStoresTheResult(int isolation) {
		contextRunner().withPropertyValues("idempotent.lease=900ms").run((context) -> {
			Orders orders = context.getBean(Orders.class);
			String orderNo = UUID.randomUUID().toString();
			transactions(context, isolation).executeWithoutResult(
					(status) -> assertThat(orders.placeAfterARenewal(orderNo)).isEqualTo("order " + orderNo));
			assertRanOnceAndReplays(orders, orderNo);
		});
	}

	@ParameterizedTest(name = "isolation {0}")
	@MethodSource("isolationLevels")
	void theSameKeyTwiceInOneTransactionReplaysInsteadOfWaitingForItself(int isolation) {
		contextRunner().run((context) -> {
			Orders orders = context.getBean(Orders.class);
			String orderNo = UUID.randomUUID().toString();
			TransactionTemplate transactions = transactions(context, isolation);
			List<String> answers = CompletableFuture.supplyAsync(() -> transactions.execute((status) -> {
				orders.count();
				return List.of(orders.place(orderNo), orders.place(orderNo));
			}))
				// Not a measure of speed: a bound on how long a self-deadlock may hang
				// the build (PostgreSQL would wait forever).
				.get(30, TimeUnit.SECONDS);
			assertThat(answers).containsExactly("order " + orderNo, "order " + orderNo);
			assertRanOnceAndReplays(orders, orderNo);
		});
	}

	@ParameterizedTest(name = "isolation {0}")
	@MethodSource("isolationLevels")
	void aRollbackReleasesTheKeyAndTheRetryRunsAgain(int isolation) {
		contextRunner().run((context) -> {
			Orders orders = context.getBean(Orders.class);
			String orderNo = UUID.randomUUID().toString();
			TransactionTemplate transactions = transactions(context, isolation);
			assertThatIllegalStateException().isThrownBy(() -> transactions.executeWithoutResult((status) -> {
				orders.count();
				orders.place(orderNo);
				throw new IllegalStateException("payment declined after the order was placed");
			}));
			assertThat(ordersNamed(orderNo)).isZero();
			assertThat(recordState(orderNo)).as("claim released").isNull();
			transactions.executeWithoutResult((status) -> orders.place(orderNo));
			assertThat(orders.executions()).isEqualTo(2);
			assertThat(ordersNamed(orderNo)).isOne();
			assertThat(recordState(orderNo)).isEqualTo("C");
		});
	}

	@ParameterizedTest(name = "isolation {0}")
	@MethodSource("isolationLevels")
	void aRolledBackNestedTransactionReleasesTheKeyAndIsNeverReplayed(int isolation) {
		contextRunner().run((context) -> {
			Orders orders = context.getBean(Orders.class);
			String orderNo = UUID.randomUUID().toString();
			TransactionTemplate nested = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
			nested.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
			AtomicReference<Boolean> refused = new AtomicReference<>();
			transactions(context, isolation).executeWithoutResult((status) -> {
				orders.count();
				// The order is placed in a savepoint that the caller then rolls back,
				// and the caller goes on and commits the rest of its work.
				assertThatIllegalStateException().isThrownBy(() -> nested.executeWithoutResult((savepoint) -> {
					orders.place(orderNo);
					throw new IllegalStateException("payment declined after the order was placed");
				}));
				// The same key again in that transaction: the rolled-back call is not
				// replayed as if it had happened; it runs, or is refused while the key
				// is held.
				try {
					orders.place(orderNo);
					refused.set(false);
				}
				catch (IdempotencyInProgressException ex) {
					refused.set(true);
				}
			});
			if (refused.get()) {
				assertThat(ordersNamed(orderNo)).as("order rows").isZero();
				assertThat(recordState(orderNo)).as("claim released after the commit").isNull();
				orders.place(orderNo);
			}
			assertThat(orders.executions()).as("executions").isEqualTo(2);
			assertThat(ordersNamed(orderNo)).as("order rows").isOne();
			assertThat(recordState(orderNo)).isEqualTo("C");
			assertThat(orders.place(orderNo)).isEqualTo("order " + orderNo);
			assertThat(orders.executions()).as("executions after a retry").isEqualTo(2);
		});
	}

	@ParameterizedTest(name = "isolation {0}")
	@MethodSource("isolationLevels")
	void aTransactionOpenPastTheLeaseAfterTheMethodReturnedKeepsDuplicatesOut(int isolation) {
		contextRunner().withPropertyValues("idempotent.lease=600ms").run((context) -> {
			Orders orders = context.getBean(Orders.class);
			String orderNo = UUID.randomUUID().toString();
			AtomicReference<CompletableFuture<String>> duplicate = new AtomicReference<>();
			transactions(context, isolation).executeWithoutResult((status) -> {
				orders.count();
				orders.place(orderNo);
				// The caller goes on with other work for longer than the lease...
				Timestamp leaseEnd = orders.expiresAt(orderNo);
				await().atMost(Duration.ofSeconds(10)).until(() -> orders.databaseTimeIsAfter(leaseEnd));
				// ...while a duplicate arrives from another thread (another request). It
				// is refused, or waits for this transaction and then replays; it never
				// runs.
				duplicate.set(CompletableFuture.supplyAsync(() -> orders.place(orderNo)));
				await().atMost(Duration.ofSeconds(10))
					.until(() -> duplicate.get().isDone() || orders.executions() > 1 || orders.someoneWaitsForALock());
			});
			try {
				assertThat(duplicate.get().get(30, TimeUnit.SECONDS)).isEqualTo("order " + orderNo);
			}
			catch (ExecutionException ex) {
				assertThat(ex).hasRootCauseInstanceOf(IdempotencyInProgressException.class);
			}
			assertRanOnceAndReplays(orders, orderNo);
		});
	}

	@ParameterizedTest(name = "isolation {0}")
	@MethodSource("isolationLevels")
	void withTheLocalCacheAReplayInsideARolledBackTransactionIsNotCached(int isolation) {
		contextRunner().withPropertyValues("idempotent.local-cache.enabled=true").run((context) -> {
			Orders orders = context.getBean(Orders.class);
			String orderNo = UUID.randomUUID().toString();
			TransactionTemplate transactions = transactions(context, isolation);
			assertThatIllegalStateException().isThrownBy(() -> transactions.executeWithoutResult((status) -> {
				orders.place(orderNo);
				// Replayed from the transaction's own, uncommitted result.
				assertThat(orders.place(orderNo)).isEqualTo("order " + orderNo);
				throw new IllegalStateException("payment declined after the order was placed");
			}));
			assertThat(recordState(orderNo)).as("claim released").isNull();
			orders.place(orderNo);
			assertThat(orders.executions()).as("executions: the retry ran, not replayed from the cache").isEqualTo(2);
			assertThat(ordersNamed(orderNo)).isOne();
		});
	}

	private void assertRanOnceAndReplays(Orders orders, String orderNo) {
		assertThat(orders.executions()).as("executions").isOne();
		assertThat(ordersNamed(orderNo)).as("order rows").isOne();
		assertThat(recordState(orderNo)).as("record state after the commit").isEqualTo("C");
		// A retry after the commit, outside any transaction.
		assertThat(orders.place(orderNo)).isEqualTo("order " + orderNo);
		assertThat(orders.executions()).as("executions after a retry").isOne();
	}

	private static TransactionTemplate transactions(ApplicationContext context, int isolation) {
		TransactionTemplate transactions = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
		transactions.setIsolationLevel(isolation);
		return transactions;
	}

	private int ordersNamed(String orderNo) {
		return this.jdbc.queryForObject("SELECT COUNT(*) FROM " + this.orderTable + " WHERE order_no = ?",
				Integer.class, orderNo);
	}

	private String recordState(String orderNo) {
		return this.jdbc.query("SELECT state FROM " + this.recordTable + " WHERE idempotency_key LIKE ?",
				(rs) -> rs.next() ? rs.getString(1) : null, "%:" + orderNo);
	}

	static List<Integer> levels(int... levels) {
		return Arrays.stream(levels).boxed().toList();
	}

	static final int DEFAULT = TransactionDefinition.ISOLATION_DEFAULT;

	static final int READ_UNCOMMITTED = TransactionDefinition.ISOLATION_READ_UNCOMMITTED;

	static final int READ_COMMITTED = TransactionDefinition.ISOLATION_READ_COMMITTED;

	static final int REPEATABLE_READ = TransactionDefinition.ISOLATION_REPEATABLE_READ;

	static final int SERIALIZABLE = TransactionDefinition.ISOLATION_SERIALIZABLE;

	@Configuration(proxyBeanMethods = false)
	static class TransactionConfiguration {

		@Bean
		PlatformTransactionManager transactionManager(DataSource dataSource) {
			return new DataSourceTransactionManager(dataSource);
		}

	}

	/**
	 * Business code: writes through the application's DataSource (so inside the caller's
	 * transaction), and looks at the record table through the raw pool (outside it).
	 */
	static class Orders {

		private final AtomicInteger executions = new AtomicInteger();

		private final String orderTable;

		private final String recordTable;

		private final JdbcTemplate outside;

		private final JdbcDialect dialect;

		private JdbcTemplate inside;

		Orders(String orderTable, String recordTable, JdbcTemplate outside, JdbcDialect dialect) {
			this.orderTable = orderTable;
			this.recordTable = recordTable;
			this.outside = outside;
			this.dialect = dialect;
		}

		@Autowired
		void setDataSource(DataSource dataSource) {
			this.inside = new JdbcTemplate(dataSource);
		}

		int count() {
			return this.inside.queryForObject("SELECT COUNT(*) FROM " + this.orderTable, Integer.class);
		}

		@Idempotent(key = "#orderNo", name = "orders")
		public String place(String orderNo) {
			this.executions.incrementAndGet();
			this.inside.update("INSERT INTO " + this.orderTable + " (order_no) VALUES (?)", orderNo);
			return "order " + orderNo;
		}

		@Idempotent(key = "#orderNo", name = "orders")
		public String placeAfterARenewal(String orderNo) {
			// Takes the caller's snapshot after the claim...
			count();
			// ...then runs until the watchdog has renewed the lease: the renewal commits
			// after that snapshot.
			Timestamp claimed = expiresAt(orderNo);
			await().atMost(Duration.ofSeconds(10)).until(() -> expiresAt(orderNo).after(claimed));
			return place0(orderNo);
		}

		private String place0(String orderNo) {
			this.executions.incrementAndGet();
			this.inside.update("INSERT INTO " + this.orderTable + " (order_no) VALUES (?)", orderNo);
			return "order " + orderNo;
		}

		Timestamp expiresAt(String orderNo) {
			return this.outside.queryForObject(
					"SELECT expires_at FROM " + this.recordTable + " WHERE idempotency_key LIKE ?", Timestamp.class,
					"%:" + orderNo);
		}

		boolean databaseTimeIsAfter(Timestamp deadline) {
			return this.outside.queryForObject("SELECT CASE WHEN " + now() + " > ? THEN 1 ELSE 0 END", Integer.class,
					deadline) == 1;
		}

		boolean someoneWaitsForALock() {
			String waiting = switch (this.dialect) {
				case H2 -> "SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS WHERE BLOCKER_ID IS NOT NULL";
				case POSTGRESQL -> "SELECT COUNT(*) FROM pg_locks WHERE NOT granted";
				case MYSQL -> "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT'";
			};
			return this.outside.queryForObject(waiting, Integer.class) > 0;
		}

		private String now() {
			return switch (this.dialect) {
				case H2 -> "CURRENT_TIMESTAMP";
				case POSTGRESQL -> "statement_timestamp()";
				case MYSQL -> "UTC_TIMESTAMP(6)";
			};
		}

		int executions() {
			return this.executions.get();
		}

	}

}
