package io.github.idempotent.store.jdbc;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.ThrowingSupplier;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.IdempotentAnnotationAutoConfiguration;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * {@code join-transaction=true} when the {@code @Idempotent} method completes inside a
 * transaction of another transaction manager (a second DataSource, as a payment
 * application with two databases has), opened within a transaction on the store's
 * DataSource. Starting the other manager's transaction suspends the outer one's
 * synchronizations but leaves the store's connection bound: the completion is written on
 * it, and must be settled when the store's transaction ends, not the other one.
 */
@RequiresDatabase(Database.POSTGRESQL)
class JdbcCompletionInAnotherManagersTransactionTests {

	// Not a measure of speed: a bound on how long a thread waiting for its own row lock
	// may hang the build (PostgreSQL would wait forever).
	private static final Duration HANG = Duration.ofSeconds(30);

	private static HikariDataSource orders;

	private static HikariDataSource payments;

	private static String recordTable;

	private static String orderTable;

	private static String paymentTable;

	@BeforeAll
	static void createTables() {
		orders = TestDatabases.postgresql();
		// The payments database: a pool of its own, as a second DataSource is.
		payments = TestDatabases.postgresql();
		recordTable = TestDatabases.uniqueTableName("idem_other_tm");
		orderTable = TestDatabases.uniqueTableName("orders_other_tm");
		paymentTable = TestDatabases.uniqueTableName("payments_other_tm");
		JdbcTemplate jdbc = new JdbcTemplate(orders);
		jdbc.execute(JdbcDialect.POSTGRESQL.schema(recordTable));
		jdbc.execute("CREATE TABLE " + orderTable + " (order_no VARCHAR(64) PRIMARY KEY)");
		jdbc.execute("CREATE TABLE " + paymentTable + " (order_no VARCHAR(64) PRIMARY KEY)");
	}

	@AfterAll
	static void dropTables() {
		// Closed first: a test that hung left a transaction open, holding its locks.
		orders.close();
		payments.close();
		try (HikariDataSource cleanup = TestDatabases.postgresql()) {
			JdbcTemplate jdbc = new JdbcTemplate(cleanup);
			jdbc.execute("DROP TABLE IF EXISTS " + recordTable);
			jdbc.execute("DROP TABLE IF EXISTS " + orderTable);
			jdbc.execute("DROP TABLE IF EXISTS " + paymentTable);
		}
	}

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(IdempotentAutoConfiguration.class, IdempotentAnnotationAutoConfiguration.class))
		.withUserConfiguration(TwoDatabasesConfiguration.class)
		.withPropertyValues("idempotent.store.type=jdbc", "idempotent.store.jdbc.table-name=" + recordTable,
				"idempotent.store.jdbc.initialize-schema=never", "idempotent.store.jdbc.purge-interval=0",
				"idempotent.store.jdbc.join-transaction=true", "idempotent.default-scope=global");

	@Test
	void aClosedStoreNoLongerListensToTheManagersItWasGiven() {
		DataSourceTransactionManager manager = new DataSourceTransactionManager(orders);
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(orders, new JdbcTemplate(orders), manager, recordTable,
				JdbcDialect.POSTGRESQL);
		store.listenTo(manager);
		assertThat(manager.getTransactionExecutionListeners()).hasSize(1);
		store.close();
		assertThat(manager.getTransactionExecutionListeners()).isEmpty();
	}

	@Test
	void theResultCommitsWithTheStoresTransactionAndARetryReplaysIt() {
		this.contextRunner.run((context) -> {
			Checkout checkout = context.getBean(Checkout.class);
			String orderNo = UUID.randomUUID().toString();
			assertThat(within(() -> checkout.checkout(orderNo, Failure.NONE))).isEqualTo("paid " + orderNo);
			assertThat(recordState(orderNo)).as("record state after the commit").isEqualTo("C");
			assertThat(within(() -> checkout.checkout(orderNo, Failure.NONE))).isEqualTo("paid " + orderNo);
			assertThat(context.getBean(Ledger.class).executions()).as("executions").isOne();
			assertThat(rowsNamed(orderTable, orderNo)).as("order rows").isOne();
			assertThat(rowsNamed(paymentTable, orderNo)).as("payment rows").isOne();
		});
	}

	@Test
	void theSameKeyTwiceInTheStoresTransactionReplaysInsteadOfWaitingForItself() {
		this.contextRunner.run((context) -> {
			Checkout checkout = context.getBean(Checkout.class);
			String orderNo = UUID.randomUUID().toString();
			assertThat(within(() -> checkout.checkoutTwice(orderNo))).isEqualTo("paid " + orderNo);
			assertThat(context.getBean(Ledger.class).executions()).as("executions").isOne();
			assertThat(recordState(orderNo)).as("record state after the commit").isEqualTo("C");
		});
	}

	/**
	 * The store's transaction rolls back after the payments one committed, or both roll
	 * back: either way the key is released and a retry runs the method again, at once.
	 */
	@ParameterizedTest
	@EnumSource(names = { "AFTER_THE_PAYMENT", "INSIDE_THE_PAYMENT" })
	void aRollbackOfTheStoresTransactionReleasesTheKey(Failure failure) {
		this.contextRunner.run((context) -> {
			Checkout checkout = context.getBean(Checkout.class);
			String orderNo = UUID.randomUUID().toString();
			assertThatIllegalStateException().isThrownBy(() -> within(() -> checkout.checkout(orderNo, failure)));
			assertThat(recordState(orderNo)).as("claim released").isNull();
			assertThat(rowsNamed(orderTable, orderNo)).as("order rows").isZero();
			assertThat(rowsNamed(paymentTable, orderNo)).as("payment rows")
				.isEqualTo((failure == Failure.AFTER_THE_PAYMENT) ? 1 : 0);
			assertThat(within(() -> checkout.checkout(orderNo, Failure.NONE))).isEqualTo("paid " + orderNo);
			assertThat(context.getBean(Ledger.class).executions()).as("executions").isEqualTo(2);
			assertThat(recordState(orderNo)).isEqualTo("C");
		});
	}

	private static <T> T within(ThrowingSupplier<T> call) {
		return assertTimeoutPreemptively(HANG, call);
	}

	private static int rowsNamed(String table, String orderNo) {
		return new JdbcTemplate(orders).queryForObject("SELECT COUNT(*) FROM " + table + " WHERE order_no = ?",
				Integer.class, orderNo);
	}

	private static String recordState(String orderNo) {
		return new JdbcTemplate(orders).query("SELECT state FROM " + recordTable + " WHERE idempotency_key LIKE ?",
				(rs) -> rs.next() ? rs.getString(1) : null, "%:" + orderNo);
	}

	enum Failure {

		NONE, INSIDE_THE_PAYMENT, AFTER_THE_PAYMENT

	}

	@Configuration(proxyBeanMethods = false)
	@EnableTransactionManagement
	static class TwoDatabasesConfiguration {

		/** The orders database, the store's. */
		@Bean
		@Primary
		DataSource dataSource() {
			// not the pool itself: each context would close it
			return new DelegatingDataSource(orders);
		}

		@Bean
		@Primary
		PlatformTransactionManager transactionManager(DataSource dataSource) {
			return new DataSourceTransactionManager(dataSource);
		}

		@Bean
		DataSource paymentsDataSource() {
			return new DelegatingDataSource(payments);
		}

		@Bean
		PlatformTransactionManager paymentsTransactionManager(@Qualifier("paymentsDataSource") DataSource payments) {
			return new DataSourceTransactionManager(payments);
		}

		@Bean
		Ledger ledger(@Qualifier("paymentsDataSource") DataSource payments) {
			return new Ledger(new JdbcTemplate(payments));
		}

		@Bean
		Payments payments(Ledger ledger) {
			return new Payments(ledger);
		}

		@Bean
		Checkout checkout(DataSource dataSource, Payments payments) {
			return new Checkout(new JdbcTemplate(dataSource), payments);
		}

	}

	/** The idempotent step: records a payment in the payments database. */
	static class Ledger {

		private final AtomicInteger executions = new AtomicInteger();

		private final JdbcTemplate jdbc;

		Ledger(JdbcTemplate jdbc) {
			this.jdbc = jdbc;
		}

		@Idempotent(key = "#orderNo", name = "payments")
		public String record(String orderNo) {
			this.executions.incrementAndGet();
			// The payments database committed a first attempt the orders database rolled
			// back.
			this.jdbc.update("INSERT INTO " + paymentTable + " (order_no) VALUES (?) ON CONFLICT DO NOTHING", orderNo);
			return "paid " + orderNo;
		}

		int executions() {
			return this.executions.get();
		}

	}

	/** Opens the payments database's transaction around the idempotent step. */
	static class Payments {

		private final Ledger ledger;

		Payments(Ledger ledger) {
			this.ledger = ledger;
		}

		@Transactional("paymentsTransactionManager")
		public String charge(String orderNo, boolean failAfterwards) {
			String paid = this.ledger.record(orderNo);
			if (failAfterwards) {
				throw new IllegalStateException("the payment provider declined after the payment was recorded");
			}
			return paid;
		}

	}

	/** Opens the orders database's transaction, the store's, around the payment. */
	static class Checkout {

		private final JdbcTemplate jdbc;

		private final Payments payments;

		Checkout(JdbcTemplate jdbc, Payments payments) {
			this.jdbc = jdbc;
			this.payments = payments;
		}

		@Transactional
		public String checkout(String orderNo, Failure failure) {
			this.jdbc.update("INSERT INTO " + orderTable + " (order_no) VALUES (?) ON CONFLICT DO NOTHING", orderNo);
			String paid = this.payments.charge(orderNo, failure == Failure.INSIDE_THE_PAYMENT);
			if (failure == Failure.AFTER_THE_PAYMENT) {
				throw new IllegalStateException("shipping failed after the payment was recorded");
			}
			return paid;
		}

		@Transactional
		public String checkoutTwice(String orderNo) {
			this.payments.charge(orderNo, false);
			return this.payments.charge(orderNo, false);
		}

	}

}
