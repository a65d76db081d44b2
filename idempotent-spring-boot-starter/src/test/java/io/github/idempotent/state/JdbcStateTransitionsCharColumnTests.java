package io.github.idempotent.state;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.github.idempotent.state.StateMachineTests.Status;
import io.github.idempotent.testsupport.RequiresDatabase;
import io.github.idempotent.testsupport.RequiresDatabase.Database;
import io.github.idempotent.testsupport.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A state column declared {@code CHAR(n)}: the database pads the stored name with spaces
 * to {@code n} characters, and the repeat path (the row is already in the target state)
 * reads it back.
 */
class JdbcStateTransitionsCharColumnTests {

	@Test
	@RequiresDatabase(Database.POSTGRESQL)
	void charColumnOnPostgreSql() {
		try (HikariDataSource postgresql = TestDatabases.postgresql()) {
			repeatPathOnACharColumn(postgresql);
		}
	}

	@Test
	@RequiresDatabase(Database.MARIADB)
	void charColumnOnMariaDb() {
		try (HikariDataSource mariadb = TestDatabases.mariadb()) {
			repeatPathOnACharColumn(mariadb);
		}
	}

	@Test
	void charColumnOnH2() {
		try (HikariDataSource h2 = TestDatabases.h2()) {
			repeatPathOnACharColumn(h2);
		}
	}

	private void repeatPathOnACharColumn(DataSource dataSource) {
		JdbcClient jdbc = JdbcClient.create(dataSource);
		String table = TestDatabases.uniqueTableName("orders_char");
		jdbc.sql("CREATE TABLE " + table + " (order_no VARCHAR(64) PRIMARY KEY, status CHAR(16) NOT NULL)").update();
		try {
			jdbc.sql("INSERT INTO " + table + " VALUES ('A-1', 'CREATED')").update();
			StateMachine<Status> machine = StateMachine.builder(Status.class)
				.allow(Status.CREATED, Status.PAID, Status.CANCELLED)
				.allow(Status.PAID, Status.SHIPPED, Status.REFUNDED)
				.build();
			JdbcStateTransitions<Status> transitions = new JdbcStateTransitions<>(machine, jdbc, table, "order_no",
					"status");
			TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
			TransitionResult<Status> first = transactions
				.execute((status) -> transitions.transition("A-1", Status.CREATED, Status.PAID));
			assertThat(first).isEqualTo(new TransitionResult.Applied<>(Status.CREATED, Status.PAID));
			TransitionResult<Status> repeated = transactions
				.execute((status) -> transitions.transition("A-1", Status.CREATED, Status.PAID));
			assertThat(repeated).isEqualTo(new TransitionResult.AlreadyInTarget<>(Status.PAID));
			assertThatExceptionOfType(IllegalStateTransitionException.class)
				.isThrownBy(() -> transactions
					.executeWithoutResult((status) -> transitions.transition("A-1", Status.CREATED, Status.CANCELLED)))
				.withMessageContaining("from PAID to CANCELLED");
			TransitionResult<Status> next = transactions
				.execute((status) -> transitions.transition("A-1", Status.PAID, Status.SHIPPED));
			assertThat(next).isEqualTo(new TransitionResult.Applied<>(Status.PAID, Status.SHIPPED));
		}
		finally {
			jdbc.sql("DROP TABLE " + table).update();
		}
	}

}
