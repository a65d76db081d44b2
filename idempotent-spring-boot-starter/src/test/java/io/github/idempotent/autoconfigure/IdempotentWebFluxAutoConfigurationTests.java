package io.github.idempotent.autoconfigure;

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

import io.github.idempotent.aop.IdempotentInterceptor;
import io.github.idempotent.aop.ReactiveIdempotencyContext;
import io.github.idempotent.web.IdempotencyProblemHandler;
import io.github.idempotent.web.WebFluxIdempotencyContext;

import static org.assertj.core.api.Assertions.assertThat;

class IdempotentWebFluxAutoConfigurationTests {

	private static final AutoConfigurations CONFIGURATIONS = AutoConfigurations.of(JacksonAutoConfiguration.class,
			IdempotentAutoConfiguration.class, IdempotentWebFluxAutoConfiguration.class);

	private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
		.withConfiguration(CONFIGURATIONS)
		.withPropertyValues("idempotent.store.type=memory");

	@Test
	void reactiveApplicationGetsTheWebFluxContract() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(ServerWebExchangeContextFilter.class)
				.hasSingleBean(WebFluxIdempotencyContext.class)
				.hasSingleBean(IdempotencyProblemHandler.class)
				.hasSingleBean(IdempotentInterceptor.class);
		});
	}

	@Test
	void backsOffWithoutWebFlux() {
		this.runner.withClassLoader(new FilteredClassLoader(DispatcherHandler.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(ReactiveIdempotencyContext.class));
	}

	@Test
	void backsOffWithoutReactorAndTheRestStillStarts() {
		new ApplicationContextRunner().withConfiguration(CONFIGURATIONS)
			.withPropertyValues("idempotent.store.type=memory")
			.withClassLoader(new FilteredClassLoader(Mono.class.getPackageName()))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(IdempotentInterceptor.class)
				.doesNotHaveBean(ReactiveIdempotencyContext.class));
	}

	@Test
	void backsOffInServletApplications() {
		new WebApplicationContextRunner().withConfiguration(CONFIGURATIONS)
			.withPropertyValues("idempotent.store.type=memory")
			.run((context) -> assertThat(context).doesNotHaveBean(ReactiveIdempotencyContext.class));
	}

	@Test
	void anApplicationsOwnContextReplacesTheDefault() {
		this.runner.withBean("custom", ReactiveIdempotencyContext.class, () -> new WebFluxIdempotencyContext("X-Key"))
			.run((context) -> assertThat(context).hasSingleBean(ReactiveIdempotencyContext.class).hasBean("custom"));
	}

	@Test
	void disabledWithTheStarter() {
		this.runner.withPropertyValues("idempotent.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(WebFluxIdempotencyContext.class));
	}

}
