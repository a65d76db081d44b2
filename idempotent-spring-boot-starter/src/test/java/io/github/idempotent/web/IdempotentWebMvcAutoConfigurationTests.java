package io.github.idempotent.web;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.test.util.ReflectionTestUtils;

import io.github.idempotent.core.IdempotentAnnotationAutoConfiguration;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.core.IdempotencyTemplate;

import static org.assertj.core.api.Assertions.assertThat;

class IdempotentWebMvcAutoConfigurationTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotentAutoConfiguration.class,
				IdempotentAnnotationAutoConfiguration.class, IdempotentWebMvcAutoConfiguration.class))
		.withPropertyValues("idempotent.store.type=memory");

	@Test
	void servletApplicationGetsTheHttpContract() {
		this.runner.withPropertyValues("idempotent.web.header-name=X-Request-Key").run((context) -> {
			assertThat(context).hasSingleBean(IdempotencyProblemHandler.class);
			assertThat(context).hasSingleBean(ResponseEntityResultConverter.class);
			assertThat(context).hasSingleBean(IdempotencyResponseHeaders.class);
			assertThat(context).hasSingleBean(IdempotentHandlerAdapter.class);
			assertThat(context.getBean(IdempotencyResponseHeaders.class).keyHeader()).isEqualTo("X-Request-Key");
		});
	}

	@Test
	void problemMappingCanBeSwitchedOff() {
		this.runner.withPropertyValues("idempotent.web.problem-details=false")
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyProblemHandler.class));
	}

	@Test
	void backsOffWhenTheApplicationDefinesItsOwnHandler() {
		IdempotencyProblemHandler own = new IdempotencyProblemHandler();
		this.runner.withBean(IdempotencyProblemHandler.class, () -> own)
			.run((context) -> assertThat(context.getBean(IdempotencyProblemHandler.class)).isSameAs(own));
	}

	@Test
	void notAppliedOutsideAServletApplication() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotentAutoConfiguration.class,
					IdempotentAnnotationAutoConfiguration.class, IdempotentWebMvcAutoConfiguration.class))
			.withPropertyValues("idempotent.store.type=memory")
			.run((context) -> {
				assertThat(context).doesNotHaveBean(IdempotencyProblemHandler.class);
				assertThat(context).doesNotHaveBean(IdempotentHandlerAdapter.class);
			});
	}

	@Test
	void disabledFlagTurnsTheHttpContractOff() {
		this.runner.withPropertyValues("idempotent.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyProblemHandler.class));
	}

	@Test
	void replayCustomizersAreGivenToTheRecordingFilterInOrder() {
		this.runner.withUserConfiguration(ReplayCustomizers.class)
			.run((context) -> assertThat(customizersOf(context.getBean(ResponseRecordingFilter.class)))
				.containsExactly(context.getBean("early"), context.getBean("late")));
	}

	@Test
	void withoutReplayCustomizersTheRecordingFilterHasNone() {
		this.runner
			.run((context) -> assertThat(customizersOf(context.getBean(ResponseRecordingFilter.class))).isEmpty());
	}

	/**
	 * A customizer may use the starter's own beans: the template (and through it the
	 * codec, whose converters include the ResponseEntity one) is no dependency of the
	 * contract's customizers.
	 */
	@Test
	void replayCustomizerMayDependOnTheTemplate() {
		this.runner.withUserConfiguration(TemplateUsingCustomizer.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(customizersOf(context.getBean(ResponseRecordingFilter.class)))
				.containsExactly(context.getBean("templateUsing"));
		});
	}

	/** The replay customizers a recording filter (either stack's) was given, in order. */
	static List<Object> customizersOf(Object recordingFilter) {
		Object contract = ReflectionTestUtils.getField(recordingFilter, "contract");
		@SuppressWarnings("unchecked")
		List<Object> list = (List<Object>) ReflectionTestUtils.invokeMethod(contract, "customizers");
		return list;
	}

	@Configuration(proxyBeanMethods = false)
	static class TemplateUsingCustomizer {

		@Bean
		IdempotentReplayCustomizer templateUsing(IdempotencyTemplate template) {
			return (replay) -> replay.setHeader("X-Template", String.valueOf(template != null));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ReplayCustomizers {

		@Bean
		@Order(2)
		IdempotentReplayCustomizer late() {
			return (replay) -> replay.setHeader("X-Late", "1");
		}

		@Bean
		@Order(1)
		IdempotentReplayCustomizer early() {
			return (replay) -> replay.setHeader("X-Early", "1");
		}

	}

}
