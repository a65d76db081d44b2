package io.github.idempotent.web;

import reactor.core.publisher.Mono;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerAdapter;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;

import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.core.ReactiveIdempotencyScopeResolver;

/**
 * The HTTP contract of {@code @Idempotent} on Spring WebFlux, guarded by
 * {@link IdempotentReactiveHandlerAdapter}. Backs off in servlet applications.
 */
@AutoConfiguration(beforeName = "io.github.idempotent.autoconfigure.IdempotentAutoConfiguration",
		afterName = "org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration")
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass({ DispatcherHandler.class, Mono.class })
@ConditionalOnBooleanProperty(name = "idempotent.enabled", matchIfMissing = true)
@Import(WebContractConfiguration.class)
public final class IdempotentWebFluxAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	ServerWebExchangeContextFilter serverWebExchangeContextFilter() {
		return new ServerWebExchangeContextFilter();
	}

	@Bean
	@ConditionalOnMissingBean
	ResponseRecordingWebFilter idempotentResponseRecordingWebFilter(WebContract contract) {
		return new ResponseRecordingWebFilter(contract);
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotentReactiveHandlerAdapter idempotentReactiveHandlerAdapter(
			ObjectProvider<RequestMappingHandlerAdapter> delegate,
			ObjectProvider<RequestMappingHandlerMapping> mappings, IdempotencyExecutor calls,
			ReactiveIdempotencyScopeResolver scopeResolver, WebContract contract) {
		return new IdempotentReactiveHandlerAdapter(delegate, mappings, calls, scopeResolver, contract);
	}

}
