package io.github.idempotent.autoconfigure;

import reactor.core.publisher.Mono;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.reactive.DispatcherHandler;

import io.github.idempotent.web.IdempotencyProblemHandler;
import io.github.idempotent.web.IdempotentReplayCustomizer;
import io.github.idempotent.web.ResponseEntityResultConverter;
import io.github.idempotent.web.ResponseRecordingWebFilter;
import io.github.idempotent.web.IdempotencyResponseHeaders;
import io.github.idempotent.web.IdempotentReactiveHandlerAdapter;
import io.github.idempotent.aop.IdempotentOperationSource;
import io.github.idempotent.core.ReactiveIdempotencyScopeResolver;
import io.github.idempotent.core.IdempotentCalls;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerAdapter;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;

/**
 * The HTTP contract of {@code @Idempotent} on Spring WebFlux, guarded by
 * {@link IdempotentReactiveHandlerAdapter}. Backs off in servlet applications.
 */
@AutoConfiguration(before = IdempotentAutoConfiguration.class,
		afterName = "org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration")
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass({ DispatcherHandler.class, Mono.class })
@ConditionalOnBooleanProperty(name = "idempotent.enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdempotentProperties.class)
public final class IdempotentWebFluxAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	ServerWebExchangeContextFilter serverWebExchangeContextFilter() {
		return new ServerWebExchangeContextFilter();
	}

	@Bean
	@ConditionalOnMissingBean
	ResponseRecordingWebFilter idempotentResponseRecordingWebFilter(IdempotentProperties properties,
			ObjectProvider<IdempotentReplayCustomizer> replayCustomizers) {
		return new ResponseRecordingWebFilter(properties.getWeb().notStoredResponseHeaders(),
				properties.getWeb().getReplayedResponseHeaders(), properties.getMaxResultSize().toBytes(),
				replayCustomizers.orderedStream().toList());
	}

	@Bean
	@ConditionalOnMissingBean
	ResponseEntityResultConverter responseEntityResultConverter(IdempotentProperties properties) {
		return new ResponseEntityResultConverter(properties.getWeb().notStoredResponseHeaders(),
				properties.getWeb().getReplayedResponseHeaders());
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotencyResponseHeaders idempotencyResponseHeaders(IdempotentProperties properties) {
		return new IdempotencyResponseHeaders(properties.getWeb().getHeaderName(),
				properties.getWeb().getReplayedHeader());
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotentReactiveHandlerAdapter idempotentReactiveHandlerAdapter(
			ObjectProvider<RequestMappingHandlerAdapter> delegate,
			ObjectProvider<RequestMappingHandlerMapping> mappings, IdempotentOperationSource operations,
			IdempotentCalls calls, ReactiveIdempotencyScopeResolver scopeResolver,
			IdempotencyResponseHeaders responseHeaders, IdempotentProperties properties) {
		return new IdempotentReactiveHandlerAdapter(delegate, mappings, operations, calls, scopeResolver,
				responseHeaders, properties.getWeb().getMaxRequestSize().toBytes(), WebRoutes.of(properties.getWeb()));
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "idempotent.web.problem-details", matchIfMissing = true)
	IdempotencyProblemHandler idempotencyProblemHandler() {
		return new IdempotencyProblemHandler();
	}

}
