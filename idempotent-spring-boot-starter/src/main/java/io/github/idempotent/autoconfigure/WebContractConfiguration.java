package io.github.idempotent.autoconfigure;

import java.util.Locale;
import java.util.stream.Collectors;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;

import io.github.idempotent.web.IdempotencyProblemHandler;
import io.github.idempotent.web.StateTransitionProblemHandler;
import io.github.idempotent.web.IdempotencyResponseHeaders;
import io.github.idempotent.web.ResponseEntityResultConverter;
import io.github.idempotent.web.WebContract;

/**
 * The beans of the HTTP contract that Spring MVC and WebFlux share, imported by
 * {@link IdempotentWebMvcAutoConfiguration} and
 * {@link IdempotentWebFluxAutoConfiguration} and applied only under their conditions.
 */
@Configuration(proxyBeanMethods = false)
class WebContractConfiguration {

	@Bean
	@ConditionalOnMissingBean
	ResponseEntityResultConverter responseEntityResultConverter(WebContract contract) {
		return new ResponseEntityResultConverter(contract);
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotencyResponseHeaders idempotencyResponseHeaders(IdempotentProperties properties) {
		return new IdempotencyResponseHeaders(properties.getWeb().getHeaderName(),
				properties.getWeb().getReplayedHeader());
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

	// Here, not in IdempotentWebProperties, which binds without Spring Web.
	@Bean
	WebContract idempotentWebContract(IdempotentProperties properties, IdempotencyResponseHeaders headers) {
		IdempotentWebProperties web = properties.getWeb();
		return new WebContract(headers, web.notStoredResponseHeaders(), web.getReplayedResponseHeaders(),
				web.getMaxRequestSize().toBytes(), properties.getMaxResultSize().toBytes(),
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
