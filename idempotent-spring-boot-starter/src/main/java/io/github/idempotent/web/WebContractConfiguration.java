package io.github.idempotent.web;

import java.util.Locale;
import java.util.stream.Collectors;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.http.HttpMethod;

import io.github.idempotent.core.IdempotencyExecutor;

/**
 * The beans of the HTTP contract that Spring MVC and WebFlux share, imported by
 * {@link IdempotentWebMvcAutoConfiguration} and
 * {@link IdempotentWebFluxAutoConfiguration} and applied only under their conditions.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(IdempotentWebProperties.class)
@ImportRuntimeHints(WebRuntimeHints.class)
class WebContractConfiguration {

	@Bean
	@ConditionalOnMissingBean
	ResponseEntityResultConverter responseEntityResultConverter(WebContract contract) {
		return new ResponseEntityResultConverter(contract);
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotencyResponseHeaders idempotencyResponseHeaders(IdempotentWebProperties properties) {
		return new IdempotencyResponseHeaders(properties.getHeaderName(), properties.getReplayedHeader());
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
	// executor's): the filters record no more than it stores.
	@Bean
	WebContract idempotentWebContract(IdempotentWebProperties web, IdempotencyResponseHeaders headers,
			IdempotencyExecutor executor) {
		return new WebContract(headers, web.notStoredResponseHeaders(), web.getReplayedResponseHeaders(),
				web.getMaxRequestSize().toBytes(), executor.getMaxResultSize(),
				web.getRoutes()
					.stream()
					.map((route) -> new WebContract.Route(route.getPaths(), route.getExcludePaths(),
							route.getMethods()
								.stream()
								.map((method) -> HttpMethod.valueOf(method.trim().toUpperCase(Locale.ROOT)))
								.collect(Collectors.toSet()),
							route.isRequired(), route.getTtl(), route.getLease(), route.getMaxDuration(),
							route.getWaitFor(), route.getRetryAfter()))
					.toList());
	}

}
