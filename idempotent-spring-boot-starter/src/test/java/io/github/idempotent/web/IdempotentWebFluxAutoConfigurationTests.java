package io.github.idempotent.web;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.reactive.DispatcherHandler;

import io.github.idempotent.core.IdempotentAnnotationAutoConfiguration;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

class IdempotentWebFluxAutoConfigurationTests {

	private static final AutoConfigurations CONFIGURATIONS = AutoConfigurations.of(JacksonAutoConfiguration.class,
			IdempotentAutoConfiguration.class, IdempotentAnnotationAutoConfiguration.class,
			IdempotentWebFluxAutoConfiguration.class);

	private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
		.withConfiguration(CONFIGURATIONS)
		.withPropertyValues("idempotent.store.type=memory");

	@Test
	void reactiveApplicationGetsTheWebFluxContract() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(ServerWebExchangeContextFilter.class)
				.hasSingleBean(IdempotentReactiveHandlerAdapter.class)
				.hasSingleBean(IdempotencyProblemHandler.class)
				.hasSingleBean(IdempotencyResponseHeaders.class)
				.hasSingleBean(ResponseEntityResultConverter.class)
				.hasBean("idempotentInterceptor");
		});
	}

	@Test
	void backsOffWithoutWebFlux() {
		this.runner.withClassLoader(new FilteredClassLoader(DispatcherHandler.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(IdempotentReactiveHandlerAdapter.class));
	}

	@Test
	void backsOffWithoutReactorAndTheRestStillStarts() {
		new ApplicationContextRunner().withConfiguration(CONFIGURATIONS)
			.withPropertyValues("idempotent.store.type=memory")
			.withClassLoader(new FilteredClassLoader(Mono.class.getPackageName()))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasBean("idempotentInterceptor")
				.doesNotHaveBean(IdempotentReactiveHandlerAdapter.class));
	}

	@Test
	void backsOffInServletApplications() {
		new WebApplicationContextRunner().withConfiguration(CONFIGURATIONS)
			.withPropertyValues("idempotent.store.type=memory")
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotentReactiveHandlerAdapter.class)
				.doesNotHaveBean(IdempotencyResponseHeaders.class)
				.doesNotHaveBean(ResponseEntityResultConverter.class)
				.doesNotHaveBean(IdempotencyProblemHandler.class));
	}

	@Test
	void disabledWithTheStarter() {
		this.runner.withPropertyValues("idempotent.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotentReactiveHandlerAdapter.class));
	}

	@Test
	void replayCustomizersAreGivenToTheRecordingFilterInOrder() {
		this.runner.withUserConfiguration(IdempotentWebMvcAutoConfigurationTests.ReplayCustomizers.class)
			.run((context) -> assertThat(IdempotentWebMvcAutoConfigurationTests
				.customizersOf(context.getBean(ResponseRecordingWebFilter.class)))
				.containsExactly(context.getBean("early"), context.getBean("late")));
	}

	@Test
	void withoutReplayCustomizersTheRecordingFilterHasNone() {
		this.runner.run((context) -> assertThat(
				IdempotentWebMvcAutoConfigurationTests.customizersOf(context.getBean(ResponseRecordingWebFilter.class)))
			.isEmpty());
	}

}
