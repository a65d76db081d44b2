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

import io.github.idempotent.aop.ReactiveIdempotencyContext;
import io.github.idempotent.web.HandlerThreadContextWebFilter;
import io.github.idempotent.web.IdempotencyProblemHandler;
import io.github.idempotent.web.IdempotentReplayCustomizer;
import io.github.idempotent.web.ResponseEntityResultConverter;
import io.github.idempotent.web.ResponseRecordingWebFilter;
import io.github.idempotent.web.WebFluxIdempotencyContext;

/**
 * The HTTP contract of {@code @Idempotent} on Spring WebFlux: the key from the
 * {@code Idempotency-Key} header of the exchange (put in the Reactor context by
 * {@link ServerWebExchangeContextFilter}, and bound to the thread of a handler that
 * returns no {@code Mono} by {@link HandlerThreadContextWebFilter}), responses recorded
 * as written and replayed byte for byte, replay headers, and the same problem responses
 * as on MVC (the handler is an {@code @RestControllerAdvice}, which WebFlux applies too).
 * Backs off without WebFlux or Reactor, and in servlet applications.
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
	@ConditionalOnMissingBean(ReactiveIdempotencyContext.class)
	WebFluxIdempotencyContext webFluxIdempotencyContext(IdempotentProperties properties) {
		return new WebFluxIdempotencyContext(properties.getWeb().getHeaderName(),
				properties.getWeb().getReplayedHeader());
	}

	@Bean
	@ConditionalOnMissingBean
	HandlerThreadContextWebFilter idempotentHandlerThreadContextWebFilter() {
		return new HandlerThreadContextWebFilter();
	}

	@Bean
	@ConditionalOnMissingBean
	// Registered with recording off too: records written while it was on still replay.
	ResponseRecordingWebFilter idempotentResponseRecordingWebFilter(IdempotentProperties properties,
			ObjectProvider<IdempotentReplayCustomizer> replayCustomizers) {
		return new ResponseRecordingWebFilter(properties.getWeb().notStoredResponseHeaders(),
				properties.getWeb().getReplayedResponseHeaders(), properties.getMaxResultSize().toBytes(),
				properties.getWeb().isRecordResponses(), replayCustomizers.orderedStream().toList());
	}

	@Bean
	@ConditionalOnMissingBean
	ResponseEntityResultConverter responseEntityResultConverter(IdempotentProperties properties) {
		return new ResponseEntityResultConverter(properties.getWeb().notStoredResponseHeaders(),
				properties.getWeb().getReplayedResponseHeaders());
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "idempotent.web.problem-details", matchIfMissing = true)
	IdempotencyProblemHandler idempotencyProblemHandler() {
		return new IdempotencyProblemHandler();
	}

}
