package io.github.idempotent.autoconfigure;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application that excluded an auto-configuration by the name it had before it moved
 * next to its code keeps it excluded: Spring Boot drops an unknown name from
 * {@code spring.autoconfigure.exclude} without a word, so the old names are mapped to the
 * new ones ({@code AutoConfiguration.replacements}).
 */
class RenamedAutoConfigurationsTests {

	private static final String[] PROPERTIES = { "idempotent.store.type=memory",
			"management.endpoints.web.exposure.include=idempotency" };

	@ParameterizedTest(name = "{0}")
	@CsvSource({ "autoconfigure.IdempotentWebMvcAutoConfiguration, idempotentResponseRecordingFilter",
			"autoconfigure.IdempotentActuatorAutoConfiguration, idempotencyEndpoint",
			"aop.IdempotentAnnotationAutoConfiguration, idempotentInterceptor" })
	void aServletApplicationThatExcludedTheOldNameStillExcludesIt(String oldName, String bean) {
		String excluded = "spring.autoconfigure.exclude=io.github.idempotent." + oldName;
		new WebApplicationContextRunner().withUserConfiguration(AllAutoConfigurations.class)
			.withPropertyValues(PROPERTIES)
			.run((context) -> {
				assertThat(context).hasNotFailed().hasBean(bean);
				assertThat(context.getBean("idempotencyExecutor")).isNotNull();
			});
		new WebApplicationContextRunner().withUserConfiguration(AllAutoConfigurations.class)
			.withPropertyValues(PROPERTIES)
			.withPropertyValues(excluded)
			.run((context) -> {
				assertThat(context).hasNotFailed().doesNotHaveBean(bean);
				assertThat(context.getBean("idempotencyExecutor")).isNotNull();
			});
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource("autoconfigure.IdempotentWebFluxAutoConfiguration, idempotentResponseRecordingWebFilter")
	void aWebFluxApplicationThatExcludedTheOldNameStillExcludesIt(String oldName, String bean) {
		String excluded = "spring.autoconfigure.exclude=io.github.idempotent." + oldName;
		new ReactiveWebApplicationContextRunner().withUserConfiguration(AllAutoConfigurations.class)
			.withPropertyValues(PROPERTIES)
			.run((context) -> assertThat(context).hasNotFailed().hasBean(bean));
		new ReactiveWebApplicationContextRunner().withUserConfiguration(AllAutoConfigurations.class)
			.withPropertyValues(PROPERTIES)
			.withPropertyValues(excluded)
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(bean));
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class AllAutoConfigurations {

	}

}
