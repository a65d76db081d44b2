package io.github.idempotent.store.jdbc;

import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
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

/**
 * Transactional completion end to end, on PostgreSQL: an {@code @Idempotent} method
 * called inside a transaction on the store's DataSource (opened by its caller) stores its
 * result in that transaction, so the business row and the stored result commit or roll
 * back together.
 */
@RequiresDatabase(Database.POSTGRESQL)
class JdbcTransactionalCompletionTests {

	private static HikariDataSource postgresql;

	private static String recordTable;

	private static String orderTable;

	@BeforeAll
	static void createTables() {
		postgresql = TestDatabases.postgresql();
		recordTable = TestDatabases.uniqueTableName("idem_tx");
		orderTable = TestDatabases.uniqueTableName("orders_tx");
		JdbcTemplate jdbc = new JdbcTemplate(postgresql);
		jdbc.execute(JdbcDialect.POSTGRESQL.schema(recordTable));
		jdbc.execute("CREATE TABLE " + orderTable + " (order_no VARCHAR(64) PRIMARY KEY)");
	}

	@AfterAll
	static void dropTables() {
		try {
			JdbcTemplate jdbc = new JdbcTemplate(postgresql);
			jdbc.execute("DROP TABLE IF EXISTS " + recordTable);
			jdbc.execute("DROP TABLE IF EXISTS " + orderTable);
		}
		finally {
			postgresql.close();
		}
	}

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(IdempotentAutoConfiguration.class, IdempotentAnnotationAutoConfiguration.class))
		.withBean(DataSource.class, () -> new DelegatingDataSource(postgresql))
		.withUserConfiguration(CheckoutConfiguration.class)
		.withPropertyValues("idempotent.store.type=jdbc", "idempotent.store.jdbc.table-name=" + recordTable,
				"idempotent.store.jdbc.initialize-schema=never", "idempotent.store.jdbc.purge-interval=0",
				"idempotent.default-scope=global");

	@Test
	void resultAndBusinessRowCommitTogether() {
		this.contextRunner.withPropertyValues("idempotent.store.jdbc.join-transaction=true").run((context) -> {
			Checkout checkout = context.getBean(Checkout.class);
			String orderNo = UUID.randomUUID().toString();
			assertThat(checkout.checkout(orderNo, false)).isEqualTo("order " + orderNo);
			assertThat(checkout.checkout(orderNo, false)).isEqualTo("order " + orderNo);
			assertThat(context.getBean(Orders.class).executions()).isOne();
			assertThat(ordersNamed(orderNo)).isOne();
			assertThat(recordState(orderNo)).isEqualTo("C");
		});
	}

	@Test
	void rollbackUndoesTheResultAndReleasesTheClaim() {
		this.contextRunner.withPropertyValues("idempotent.store.jdbc.join-transaction=true").run((context) -> {
			Checkout checkout = context.getBean(Checkout.class);
			String orderNo = UUID.randomUUID().toString();
			assertThatIllegalStateException().isThrownBy(() -> checkout.checkout(orderNo, true));
			assertThat(ordersNamed(orderNo)).isZero();
			assertThat(recordState(orderNo)).as("claim released").isNull();
			// The retry runs the method again, as nothing of the first attempt remains.
			assertThat(checkout.checkout(orderNo, false)).isEqualTo("order " + orderNo);
			assertThat(context.getBean(Orders.class).executions()).isEqualTo(2);
			assertThat(ordersNamed(orderNo)).isOne();
		});
	}

	@Test
	void withoutJoinTransactionARolledBackCallStillReplaysItsResult() {
		// What join-transaction is for: the stored result outlives the rolled-back order.
		this.contextRunner.run((context) -> {
			Checkout checkout = context.getBean(Checkout.class);
			String orderNo = UUID.randomUUID().toString();
			assertThatIllegalStateException().isThrownBy(() -> checkout.checkout(orderNo, true));
			assertThat(ordersNamed(orderNo)).isZero();
			assertThat(recordState(orderNo)).isEqualTo("C");
			assertThat(checkout.checkout(orderNo, false)).isEqualTo("order " + orderNo);
			assertThat(context.getBean(Orders.class).executions()).isOne();
		});
	}

	private static int ordersNamed(String orderNo) {
		return new JdbcTemplate(postgresql).queryForObject("SELECT COUNT(*) FROM " + orderTable + " WHERE order_no = ?",
				Integer.class, orderNo);
	}

	private static String recordState(String orderNo) {
		return new JdbcTemplate(postgresql).query("SELECT state FROM " + recordTable + " WHERE idempotency_key LIKE ?",
				(rs) -> rs.next() ? rs.getString(1) : null, "%:" + orderNo);
	}

	@Configuration(proxyBeanMethods = false)
	@EnableTransactionManagement
	static class CheckoutConfiguration {

		@Bean
		PlatformTransactionManager transactionManager(DataSource dataSource) {
			return new DataSourceTransactionManager(dataSource);
		}

		@Bean
		Orders orders(DataSource dataSource) {
			return new Orders(new JdbcTemplate(dataSource));
		}

		@Bean
		Checkout checkout(Orders orders) {
			return new Checkout(orders);
		}

	}

	static class Orders {

		private final AtomicInteger executions = new AtomicInteger();

		private final JdbcTemplate jdbc;

		Orders(JdbcTemplate jdbc) {
			this.jdbc = jdbc;
		}

		@Idempotent(key = "#orderNo", name = "orders")
		public String place(String orderNo) {
			this.executions.incrementAndGet();
			this.jdbc.update("INSERT INTO " + orderTable + " (order_no) VALUES (?)", orderNo);
			return "order " + orderNo;
		}

		public int executions() {
			return this.executions.get();
		}

	}

	/**
	 * Opens the transaction around the idempotent call, as a service layer does.
	 */
	static class Checkout {

		private final Orders orders;

		Checkout(Orders orders) {
			this.orders = orders;
		}

		@Transactional
		public String checkout(String orderNo, boolean failAfterwards) {
			String order = this.orders.place(orderNo);
			if (failAfterwards) {
				throw new IllegalStateException("payment declined after the order was placed");
			}
			return order;
		}

	}

}
