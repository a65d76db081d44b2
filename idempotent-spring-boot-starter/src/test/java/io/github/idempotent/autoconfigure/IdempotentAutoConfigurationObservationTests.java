package io.github.idempotent.autoconfigure;

import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.idempotent.core.IdempotentAnnotationAutoConfiguration;
import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.IdempotencyExecutor;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Calls are observed in the application's {@link ObservationRegistry} when it has one;
 * without one, or without micrometer-core, the starter works the same.
 */
class IdempotentAutoConfigurationObservationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotentAutoConfiguration.class,
				IdempotentAnnotationAutoConfiguration.class))
		.withPropertyValues("idempotent.default-scope=global", "idempotent.store.type=memory")
		.withBean(Counter.class);

	@Test
	void observesCallsWhenARegistryIsPresent() {
		TestObservationRegistry registry = TestObservationRegistry.create();
		this.runner.withBean(ObservationRegistry.class, () -> registry).run((context) -> {
			assertThat(context.getBean(Counter.class).next("k")).isEqualTo(1);
			assertThat(registry).hasSingleObservationThat().hasNameEqualTo("idempotent.call");
		});
	}

	@Test
	void guardsCallsWithoutARegistryBean() {
		this.runner.run((context) -> {
			assertThat(context.getBean(Counter.class).next("k")).isEqualTo(1);
			assertThat(context.getBean(Counter.class).next("k")).isEqualTo(1);
		});
	}

	@Test
	void guardsCallsWithoutMicrometerCore() {
		this.runner.withClassLoader(new FilteredClassLoader("io.micrometer.core"))
			.withBean(ObservationRegistry.class, TestObservationRegistry::create)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).doesNotHaveBean(IdempotencyMetrics.class);
				Counter counter = context.getBean(Counter.class);
				assertThat(counter.next("k")).isEqualTo(1);
				assertThat(counter.next("k")).isEqualTo(1);
			});
	}

	@Test
	void observesNothingWhenIdempotencyIsDisabled() {
		TestObservationRegistry registry = TestObservationRegistry.create();
		this.runner.withBean(ObservationRegistry.class, () -> registry)
			.withPropertyValues("idempotent.enabled=false")
			.run((context) -> {
				assertThat(context).doesNotHaveBean(IdempotencyExecutor.class);
				context.getBean(Counter.class).next("k");
				assertThat(registry).doesNotHaveAnyObservation();
			});
	}

	public static class Counter {

		private int count;

		@Idempotent(key = "#key")
		public synchronized int next(String key) {
			return ++this.count;
		}

	}

}
