package io.github.idempotent.autoconfigure;

import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.IdempotentCallObservations;
import io.github.idempotent.observation.IdempotencyObservations;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The observation of calls is configured only with micrometer-observation on the class
 * path and an {@link ObservationRegistry} in the context; without them the starter works
 * as before.
 */
class IdempotentObservationAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotentAutoConfiguration.class,
				IdempotentObservationAutoConfiguration.class))
		.withPropertyValues("idempotent.default-scope=global", "idempotent.store.type=memory")
		.withBean(Counter.class);

	@Test
	void observesCallsWhenARegistryIsPresent() {
		TestObservationRegistry registry = TestObservationRegistry.create();
		this.runner.withBean(ObservationRegistry.class, () -> registry).run((context) -> {
			assertThat(context).hasSingleBean(IdempotencyObservations.class);
			assertThat(context.getBean(Counter.class).next("k")).isEqualTo(1);
			assertThat(registry).hasSingleObservationThat().hasNameEqualTo("idempotent.call");
		});
	}

	@Test
	void backsOffWithoutARegistryBean() {
		this.runner.run((context) -> {
			assertThat(context).doesNotHaveBean(IdempotentCallObservations.class);
			assertThat(context.getBean(Counter.class).next("k")).isEqualTo(1);
			assertThat(context.getBean(Counter.class).next("k")).isEqualTo(1);
		});
	}

	@Test
	void backsOffWithoutMicrometerObservationAndTheStarterStillWorks() {
		this.runner.withClassLoader(new FilteredClassLoader("io.micrometer"))
			.withBean(ObservationRegistry.class, TestObservationRegistry::create)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).doesNotHaveBean(IdempotentCallObservations.class);
				assertThat(context).doesNotHaveBean(IdempotencyMetrics.class);
				Counter counter = context.getBean(Counter.class);
				assertThat(counter.next("k")).isEqualTo(1);
				assertThat(counter.next("k")).isEqualTo(1);
			});
	}

	@Test
	void backsOffWhenTheApplicationObservesCallsItself() {
		IdempotentCallObservations own = (policy, key, parent) -> null;
		this.runner.withBean(ObservationRegistry.class, TestObservationRegistry::create)
			.withBean(IdempotentCallObservations.class, () -> own)
			.run((context) -> assertThat(context.getBean(IdempotentCallObservations.class)).isSameAs(own));
	}

	@Test
	void backsOffWhenIdempotencyIsDisabled() {
		this.runner.withBean(ObservationRegistry.class, TestObservationRegistry::create)
			.withPropertyValues("idempotent.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotentCallObservations.class));
	}

	public static class Counter {

		private int count;

		@Idempotent(key = "#key")
		public synchronized int next(String key) {
			return ++this.count;
		}

	}

}
