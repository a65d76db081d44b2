package io.github.idempotent.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The warning of an application whose records fall back to memory tells it where to keep
 * them: in its database when it has one, else in Redis.
 */
@ExtendWith(OutputCaptureExtension.class)
class MemoryStoreFallbackWarningTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withClassLoader(new FilteredClassLoader("org.springframework.data.redis"))
		.withConfiguration(AutoConfigurations.of(IdempotentAutoConfiguration.class));

	@Test
	void aJdbcApplicationIsToldToKeepItsRecordsInItsDatabase(CapturedOutput output) {
		this.runner.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class))
			.withPropertyValues("spring.datasource.generate-unique-name=true")
			.run((context) -> {
				assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(InMemoryIdempotencyStore.class);
				assertThat(output).contains("This application has a DataSource: set idempotent.store.type=jdbc")
					.doesNotContain("spring-boot-starter-data-redis");
			});
	}

	@Test
	void anApplicationWithoutADatabaseIsToldToAddRedis(CapturedOutput output) {
		this.runner.run((context) -> {
			assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(InMemoryIdempotencyStore.class);
			assertThat(output).contains("Add spring-boot-starter-data-redis").doesNotContain("DataSource");
		});
	}

}
