package io.github.idempotent.store.jdbc;

import java.net.URI;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.IdempotentAnnotationAutoConfiguration;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.testsupport.FaultProxy;
import io.github.idempotent.testsupport.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A connection cut while the completion or the release of an {@code @Idempotent} call is
 * on its way to the database: the statement never arrives, the driver reads the end of
 * the connection. The executor asks again on a fresh connection before it answers, so the
 * result is stored (a retry after the lease gets it replayed, the method ran once) and a
 * failed call's key is freed (a retry runs at once, not 409 until the lease ends). The
 * cut is a real one, by {@link FaultProxy} between the pool and the server.
 */
abstract class AbstractJdbcStoreCutConnectionTests {

	private static final Duration LEASE = Duration.ofSeconds(1);

	private HikariDataSource database;

	private FaultProxy proxy;

	private HikariDataSource throughProxy;

	private String table;

	protected abstract HikariDataSource createDataSource();

	protected abstract String url();

	protected abstract JdbcDialect dialect();

	/**
	 * Parameters of the URL through the proxy, so that every statement is sent with its
	 * SQL text, which the proxy recognises.
	 */
	protected String urlParameters() {
		return "";
	}

	@BeforeEach
	void startProxy() {
		this.database = createDataSource();
		this.table = TestDatabases.uniqueTableName("idem_cut");
		new JdbcTemplate(this.database).execute(dialect().schema(this.table));
		URI server = URI.create(url().substring("jdbc:".length()));
		this.proxy = FaultProxy.start(server.getHost(), server.getPort());
		this.throughProxy = new HikariDataSource();
		this.throughProxy.setJdbcUrl("jdbc:" + server.getScheme() + "://127.0.0.1:" + this.proxy.port()
				+ server.getPath() + urlParameters());
		this.throughProxy.setUsername(this.database.getUsername());
		this.throughProxy.setPassword(this.database.getPassword());
		this.throughProxy.setMaximumPoolSize(4);
	}

	@AfterEach
	void stopProxy() {
		try {
			this.throughProxy.close();
			this.proxy.close();
			new JdbcTemplate(this.database).execute("DROP TABLE IF EXISTS " + this.table);
		}
		finally {
			this.database.close();
		}
	}

	private ApplicationContextRunner contextRunner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotentAutoConfiguration.class,
					IdempotentAnnotationAutoConfiguration.class))
			.withBean(DataSource.class, () -> this.throughProxy)
			.withBean(Orders.class, () -> new Orders(this.proxy))
			.withBean(PlatformTransactionManager.class, () -> new DataSourceTransactionManager(this.throughProxy))
			.withPropertyValues("idempotent.store.type=jdbc", "idempotent.store.jdbc.table-name=" + this.table,
					"idempotent.store.jdbc.initialize-schema=never", "idempotent.store.jdbc.purge-interval=0",
					"idempotent.default-scope=global");
	}

	@Test
	void aCompletionCutOnItsWayIsStoredAndReplayedAfterTheLease() {
		contextRunner().run((context) -> {
			Orders orders = context.getBean(Orders.class);
			String orderNo = UUID.randomUUID().toString();
			orders.cutNextOnRequest("SET state = 'C'");
			assertThat(orders.place(orderNo)).isEqualTo("order " + orderNo + " #1");
			assertThat(this.proxy.requestsCut()).as("completions cut").isOne();
			// Past the lease, a placeholder left in progress would be taken over and the
			// method run again, with another answer.
			Thread.sleep(LEASE.multipliedBy(2).toMillis());
			assertThat(orders.place(orderNo)).isEqualTo("order " + orderNo + " #1");
			assertThat(orders.executions()).isOne();
		});
	}

	@Test
	void aCompletionOfAFutureCutOnItsWayIsStoredAndReplayedAfterTheLease() {
		contextRunner().run((context) -> {
			Orders orders = context.getBean(Orders.class);
			String orderNo = UUID.randomUUID().toString();
			orders.cutNextOnRequest("SET state = 'C'");
			// Stored from the future's completion, off the caller's thread: the retry
			// is scheduled rather than slept.
			assertThat(orders.placeLater(orderNo).get()).isEqualTo("order " + orderNo + " #1");
			assertThat(this.proxy.requestsCut()).as("completions cut").isOne();
			Thread.sleep(LEASE.multipliedBy(2).toMillis());
			assertThat(orders.placeLater(orderNo).get()).isEqualTo("order " + orderNo + " #1");
			assertThat(orders.executions()).isOne();
		});
	}

	@Test
	void aReleaseCutOnItsWayStillFreesTheKey() {
		contextRunner().run((context) -> {
			Orders orders = context.getBean(Orders.class);
			String orderNo = UUID.randomUUID().toString();
			orders.cutNextOnRequest("DELETE FROM " + this.table);
			orders.failNext();
			assertThatIllegalStateException().isThrownBy(() -> orders.charge(orderNo)).withMessage("declined");
			assertThat(this.proxy.requestsCut()).as("releases cut").isOne();
			// At once, well within the lease: the key was released, so the retry runs.
			assertThat(orders.charge(orderNo)).isEqualTo("charged " + orderNo + " #2");
			assertThat(orders.executions()).isEqualTo(2);
		});
	}

	@Test
	void aReleaseAfterARollbackCutOnItsWayStillFreesTheKey() {
		contextRunner().withPropertyValues("idempotent.store.jdbc.join-transaction=true").run((context) -> {
			Orders orders = context.getBean(Orders.class);
			String orderNo = UUID.randomUUID().toString();
			orders.cutNextOnRequest("DELETE FROM " + this.table);
			// The completion is written in the caller's transaction; its rollback
			// releases the key after it, on a connection that is cut.
			assertThatIllegalStateException().isThrownBy(() -> transactions(context).executeWithoutResult((status) -> {
				orders.charge(orderNo);
				throw new IllegalStateException("payment declined after the charge");
			}));
			assertThat(this.proxy.requestsCut()).as("releases cut").isOne();
			assertThat(orders.charge(orderNo)).isEqualTo("charged " + orderNo + " #2");
			assertThat(orders.executions()).isEqualTo(2);
		});
	}

	@Test
	void aCompletionAfterTheCommitCutOnItsWayIsStoredAndReplayedAfterTheLease() {
		// A snapshot older than the claim defers the completion to after the commit on
		// PostgreSQL only.
		assumeTrue(dialect() == JdbcDialect.POSTGRESQL,
				"MySQL and MariaDB complete in the caller's transaction here (an InnoDB UPDATE reads the latest "
						+ "committed row whatever the snapshot): there is no completion after the commit to cut");
		contextRunner().withPropertyValues("idempotent.store.jdbc.join-transaction=true").run((context) -> {
			Orders orders = context.getBean(Orders.class);
			String orderNo = UUID.randomUUID().toString();
			orders.cutNextOnRequest("SET state = 'C'");
			TransactionTemplate transactions = transactions(context);
			transactions.setIsolationLevel(TransactionDefinition.ISOLATION_REPEATABLE_READ);
			String first = transactions.execute((status) -> {
				// The caller's snapshot predates the claim: the completion waits for the
				// commit, and is cut on its way then.
				new JdbcTemplate(this.throughProxy).queryForObject("SELECT 1", Integer.class);
				return orders.place(orderNo);
			});
			assertThat(first).isEqualTo("order " + orderNo + " #1");
			assertThat(this.proxy.requestsCut()).as("completions cut").isOne();
			Thread.sleep(LEASE.multipliedBy(2).toMillis());
			assertThat(orders.place(orderNo)).isEqualTo("order " + orderNo + " #1");
			assertThat(orders.executions()).isOne();
		});
	}

	private static TransactionTemplate transactions(AssertableApplicationContext context) {
		return new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
	}

	static class Orders {

		private final FaultProxy proxy;

		private final AtomicInteger executions = new AtomicInteger();

		private volatile String cutOnRequest;

		private volatile boolean failNext;

		Orders(FaultProxy proxy) {
			this.proxy = proxy;
		}

		@Idempotent(key = "#orderNo", lease = "1s")
		public String place(String orderNo) {
			return "order " + orderNo + " #" + run();
		}

		@Idempotent(key = "#orderNo", lease = "1s")
		public CompletableFuture<String> placeLater(String orderNo) {
			return CompletableFuture.completedFuture("order " + orderNo + " #" + run());
		}

		@Idempotent(key = "#orderNo", lease = "10m")
		public String charge(String orderNo) {
			int execution = run();
			if (this.failNext) {
				this.failNext = false;
				throw new IllegalStateException("declined");
			}
			return "charged " + orderNo + " #" + execution;
		}

		// Set through methods: the test holds the bean's proxy, whose fields are not the
		// target's.
		public void cutNextOnRequest(String text) {
			this.cutOnRequest = text;
		}

		public void failNext() {
			this.failNext = true;
		}

		public int executions() {
			return this.executions.get();
		}

		/**
		 * Counts the execution and arms the cut: the next statement with that text, the
		 * completion or the release that follows the method, is cut on its way.
		 */
		private int run() {
			String text = this.cutOnRequest;
			if (text != null) {
				this.cutOnRequest = null;
				this.proxy.cutOnRequest(text);
			}
			return this.executions.incrementAndGet();
		}

	}

}
