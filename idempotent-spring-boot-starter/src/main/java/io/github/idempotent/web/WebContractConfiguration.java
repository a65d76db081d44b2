package io.github.idempotent.web;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.idempotent.core.IdempotencyExecutor;

/**
 * The beans of the HTTP contract that the Spring MVC and WebFlux configurations share,
 * imported by each and applied only under their conditions.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(IdempotentWebProperties.class)
class WebContractConfiguration {

	@Bean
	@ConditionalOnMissingBean
	ResponseEntityResultConverter responseEntityResultConverter(WebContract contract) {
		return new ResponseEntityResultConverter(contract);
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotencyResponseHeaders idempotencyResponseHeaders(IdempotentWebProperties properties) {
		return new IdempotencyResponseHeaders(properties.headerName(), properties.replayedHeader());
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "idempotent.web.problem-details", matchIfMissing = true)
	IdempotencyProblemHandler idempotencyProblemHandler() {
		return new IdempotencyProblemHandler();
	}

	// A @RestControllerAdvice: Spring MVC and WebFlux both apply it.
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "idempotent.web.problem-details", matchIfMissing = true)
	StateTransitionProblemHandler stateTransitionProblemHandler() {
		return new StateTransitionProblemHandler();
	}

	// Here, not in IdempotentWebProperties, which binds without Spring Web. The largest
	// result is the executor's (idempotent.max-result-size, or the application's own
	// executor's).
	@Bean
	WebContract idempotentWebContract(IdempotentWebProperties web, IdempotencyResponseHeaders headers,
			IdempotencyExecutor executor, ObjectProvider<IdempotentReplayCustomizer> replayCustomizers) {
		return new WebContract(headers, web, executor.getMaxResultSize(),
				() -> replayCustomizers.orderedStream().toList());
	}

}
