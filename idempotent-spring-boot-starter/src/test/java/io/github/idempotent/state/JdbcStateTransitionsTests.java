package io.github.idempotent.state;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.support.TransactionTemplate;

import io.github.idempotent.state.StateMachineTests.Status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class JdbcStateTransitionsTests {

	private EmbeddedDatabase database;

	private JdbcClient jdbc;

	private JdbcStateTransitions<Status> transitions;

	@BeforeEach
	void createTable() {
		this.database = new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build();
		this.jdbc = JdbcClient.create(this.database);
		this.jdbc.sql("CREATE TABLE orders (order_no VARCHAR(64) PRIMARY KEY, status VARCHAR(16) NOT NULL)").update();
		this.jdbc.sql("INSERT INTO orders VALUES ('A-1', 'CREATED')").update();
		StateMachine<Status> machine = StateMachine.builder(Status.class)
			.allow(Status.CREATED, Status.PAID, Status.CANCELLED)
			.allow(Status.PAID, Status.SHIPPED, Status.REFUNDED)
			.build();
		this.transitions = new JdbcStateTransitions<>(machine, this.jdbc, "orders", "order_no", "status");
	}

	@AfterEach
	void dropDatabase() {
		this.database.shutdown();
	}

	@Test
	void firstCallAppliesSecondFindsItDone() {
		assertThat(this.transitions.transition("A-1", Status.CREATED, Status.PAID))
			.isEqualTo(new TransitionResult.Applied<>(Status.CREATED, Status.PAID));
		assertThat(this.transitions.transition("A-1", Status.CREATED, Status.PAID))
			.isEqualTo(new TransitionResult.AlreadyInTarget<>(Status.PAID));
		assertThat(status()).isEqualTo("PAID");
	}

	@Test
	void rowInAnotherStateIsAnIllegalTransition() {
		this.transitions.transition("A-1", Status.CREATED, Status.CANCELLED);
		assertThatExceptionOfType(IllegalStateTransitionException.class)
			.isThrownBy(() -> this.transitions.transition("A-1", Status.CREATED, Status.PAID))
			.withMessageContaining("from CANCELLED to PAID");
		assertThat(status()).isEqualTo("CANCELLED");
	}

	@Test
	void missingRowIsNotFound() {
		assertThat(this.transitions.transition("B-2", Status.CREATED, Status.PAID))
			.isInstanceOf(TransitionResult.NotFound.class);
	}

	@Test
	void transitionOutsideTheTableIsAProgrammingError() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.transitions.transition("A-1", Status.CREATED, Status.SHIPPED));
	}

	@Test
	void identifiersAreChecked() {
		assertThatIllegalArgumentException().isThrownBy(() -> new JdbcStateTransitions<>(this.transitions.getMachine(),
				this.jdbc, "orders; DROP TABLE orders", "order_no", "status"));
	}

	@Test
	void concurrentTransitionsApplyOnce() throws Exception {
		TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(this.database));
		ExecutorService pool = Executors.newFixedThreadPool(8);
		try {
			List<Callable<TransitionResult<Status>>> calls = new ArrayList<>();
			for (int i = 0; i < 32; i++) {
				calls
					.add(() -> tx.execute((status) -> this.transitions.transition("A-1", Status.CREATED, Status.PAID)));
			}
			int applied = 0;
			for (Future<TransitionResult<Status>> result : pool.invokeAll(calls)) {
				if (result.get() instanceof TransitionResult.Applied) {
					applied++;
				}
				else {
					assertThat(result.get()).isEqualTo(new TransitionResult.AlreadyInTarget<>(Status.PAID));
				}
			}
			assertThat(applied).isOne();
		}
		finally {
			pool.shutdownNow();
		}
	}

	private String status() {
		return this.jdbc.sql("SELECT status FROM orders WHERE order_no = 'A-1'").query(String.class).single();
	}

}
