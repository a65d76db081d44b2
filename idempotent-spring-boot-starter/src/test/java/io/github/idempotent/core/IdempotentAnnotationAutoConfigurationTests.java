package io.github.idempotent.core;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;

import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.web.IdempotentWebMvcAutoConfiguration;

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
			assertThat(context.getBean(IdempotentInterceptor.class))
				.hasFieldOrPropertyWithValue("executor", context.getBean(IdempotencyExecutor.class))
				.hasFieldOrPropertyWithValue("operations", context.getBean(IdempotencyExecutor.class).operations());
		});
	}

	@Test
	void disabledFlagTurnsInterceptionOff() {
		this.runner.withPropertyValues("idempotent.enabled=false").run((context) -> {
			assertThat(context).doesNotHaveBean(IdempotentInterceptor.class);
			assertThat(context).doesNotHaveBean(IdempotencyExecutor.class);
			assertThat(context).doesNotHaveBean(IdempotentAnnotationBeanPostProcessor.class);
		});
	}

	@Test
	void backsOffWhenTheCoreAutoConfigurationIsExcluded() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotentAnnotationAutoConfiguration.class))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).doesNotHaveBean(IdempotentInterceptor.class);
				assertThat(context).doesNotHaveBean(IdempotentAnnotationBeanPostProcessor.class);
			});
	}

	@Test
	void webHandlersAreStillGuardedWhenInterceptionIsExcluded() {
		new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, WebMvcAutoConfiguration.class,
					IdempotentAutoConfiguration.class, IdempotentWebMvcAutoConfiguration.class))
			.withPropertyValues("idempotent.store.type=memory")
			.run((context) -> {
				assertThat(context).hasNotFailed().hasBean("idempotentHandlerAdapter");
				assertThat(context).doesNotHaveBean(IdempotentInterceptor.class);
			});
	}

}
