package io.github.idempotent.aop;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.core.IdempotencyDefaults;
import io.github.idempotent.core.IdempotencyExecutor;

import static org.assertj.core.api.Assertions.assertThat;

class IdempotentAnnotationAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(IdempotentAutoConfiguration.class, IdempotentAnnotationAutoConfiguration.class))
		.withPropertyValues("idempotent.store.type=memory");

	@Test
	void interceptorOnTheBeansOfTheCoreAutoConfiguration() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(IdempotentInterceptor.class);
			assertThat(context).hasSingleBean(IdempotentAnnotationBeanPostProcessor.class);
			assertThat(context.getBean(IdempotentOperationSource.class)).hasFieldOrPropertyWithValue("defaults",
					context.getBean(IdempotencyDefaults.class));
			assertThat(context.getBean(IdempotentInterceptor.class)).hasFieldOrPropertyWithValue("executor",
					context.getBean(IdempotencyExecutor.class));
		});
	}

	@Test
	void disabledFlagTurnsInterceptionOff() {
		this.runner.withPropertyValues("idempotent.enabled=false").run((context) -> {
			assertThat(context).doesNotHaveBean(IdempotentInterceptor.class);
			assertThat(context).doesNotHaveBean(IdempotentOperationSource.class);
			assertThat(context).doesNotHaveBean(IdempotentAnnotationBeanPostProcessor.class);
		});
	}

}
