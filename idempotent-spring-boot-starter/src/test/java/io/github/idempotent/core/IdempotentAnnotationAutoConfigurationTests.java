package io.github.idempotent.core;

import java.util.List;
import io.github.idempotent.annotation.Idempotent;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Bean;
import org.springframework.beans.factory.config.BeanPostProcessor;
import java.time.Duration;
import java.lang.reflect.Method;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;

import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.web.IdempotentWebMvcAutoConfiguration;

import io.github.idempotent.store.memory.InMemoryIdempotencyStore;

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
		// An executor of the application's own is not enough: the resolvers come from the
		// core auto-configuration.
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotentAnnotationAutoConfiguration.class))
			.withBean(IdempotencyExecutor.class,
					() -> new IdempotencyExecutor(new InMemoryIdempotencyStore(), FailureMode.CLOSED, 1024,
							IdempotencyObserver.composite(List.of())))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).doesNotHaveBean(IdempotentInterceptor.class);
			});
	}

	@Test
	void anExecutorCreatedBeforeThePostProcessorsReadsPlaceholders() {
		this.runner.withPropertyValues("payments.ttl=7h").withUserConfiguration(EarlyExecutor.class).run((context) -> {
			assertThat(context).hasNotFailed();
			Method pay = Payments.class.getMethod("pay", String.class);
			assertThat(context.getBean(IdempotencyExecutor.class).operation(pay, Payments.class))
				.satisfies((operation) -> assertThat(operation.policy().ttl()).isEqualTo(Duration.ofHours(7)));
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

	@Configuration(proxyBeanMethods = false)
	static class EarlyExecutor {

		// The application's own post-processor that needs the executor: Spring creates
		// the executor before any post-processor applies to it.
		@Bean
		static BeanPostProcessor needsTheExecutor(IdempotencyExecutor executor) {
			return new BeanPostProcessor() {
			};
		}

		@Bean
		Payments payments() {
			return new Payments();
		}

	}

	static class Payments {

		@Idempotent(key = "#id", ttl = "${payments.ttl}")
		public String pay(String id) {
			return id;
		}

	}

}
