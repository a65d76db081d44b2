package io.github.idempotent.core;

import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Expressions see the arguments by name and by position ({@code #p0}, {@code #a0}), and
 * the target as root object, as with Spring's method-based evaluation context.
 */
class IdempotentExpressionVariablesTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(IdempotentAutoConfiguration.class, IdempotentAnnotationAutoConfiguration.class))
		.withBean(Orders.class)
		.withPropertyValues("idempotent.store.type=memory", "idempotent.default-scope=global");

	@Test
	void argumentsAreVariablesByNameAndPosition() {
		this.contextRunner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			for (int i = 0; i < 2; i++) {
				assertThat(orders.byName("a", 1)).isEqualTo("a-1");
				assertThat(orders.byP("b", 2)).isEqualTo("b-2");
				assertThat(orders.byA("c", 3)).isEqualTo("c-3");
				assertThat(orders.byRoot("d", 4)).isEqualTo("d-4");
			}
			assertThat(orders.runs()).isEqualTo(4);
			// The payload expression sees the same variables: another amount is another
			// payload for the same key.
			assertThat(orders.byName("e", 5)).isEqualTo("e-5");
			assertThat(orders.runs()).isEqualTo(5);
		});
	}

	static class Orders {

		private final AtomicInteger runs = new AtomicInteger();

		public String prefix = "root";

		public int runs() {
			return this.runs.get();
		}

		@Idempotent(key = "#orderNo", payload = "#amount")
		public String byName(String orderNo, int amount) {
			return run(orderNo, amount);
		}

		@Idempotent(key = "#p0", payload = "#p1")
		public String byP(String orderNo, int amount) {
			return run(orderNo, amount);
		}

		@Idempotent(key = "#a0 + ':' + #a1")
		public String byA(String orderNo, int amount) {
			return run(orderNo, amount);
		}

		@Idempotent(key = "#root.prefix + #orderNo")
		public String byRoot(String orderNo, int amount) {
			return run(orderNo, amount);
		}

		private String run(String orderNo, int amount) {
			this.runs.incrementAndGet();
			return orderNo + "-" + amount;
		}

	}

}
