package io.github.idempotent.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.web.servlet.DispatcherServlet;

import io.github.idempotent.core.IdempotencyKeyResolver;
import io.github.idempotent.web.HeaderIdempotencyKeyResolver;
import io.github.idempotent.web.IdempotencyProblemHandler;
import io.github.idempotent.web.IdempotentReplayCustomizer;
import io.github.idempotent.web.IdempotencyResponseHeaders;
import io.github.idempotent.web.ResponseEntityResultConverter;
import io.github.idempotent.web.ResponseRecordingFilter;
import io.github.idempotent.web.StateTransitionProblemHandler;

/**
 * The HTTP contract of {@code @Idempotent} on Spring MVC: the key from the
 * {@code Idempotency-Key} header, responses recorded as written and replayed byte for
 * byte, replay headers, and problem responses.
 */
@AutoConfiguration(before = IdempotentAutoConfiguration.class,
		afterName = "org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration")
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
@ConditionalOnBooleanProperty(name = "idempotent.enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdempotentProperties.class)
public final class IdempotentWebMvcAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(IdempotencyKeyResolver.class)
	HeaderIdempotencyKeyResolver headerIdempotencyKeyResolver(IdempotentProperties properties) {
		return new HeaderIdempotencyKeyResolver(properties.getWeb().getHeaderName());
	}

	@Bean
	@ConditionalOnMissingBean
	ResponseEntityResultConverter responseEntityResultConverter(IdempotentProperties properties) {
		return new ResponseEntityResultConverter(properties.getWeb().notStoredResponseHeaders(),
				properties.getWeb().getReplayedResponseHeaders());
	}

	@Bean
	@ConditionalOnMissingBean
	// Registered with recording off too: records written while it was on still replay.
	ResponseRecordingFilter idempotentResponseRecordingFilter(IdempotentProperties properties,
			ObjectProvider<IdempotentReplayCustomizer> replayCustomizers) {
		return new ResponseRecordingFilter(properties.getWeb().notStoredResponseHeaders(),
				properties.getWeb().getReplayedResponseHeaders(), properties.getMaxResultSize().toBytes(),
				properties.getWeb().isRecordResponses(), replayCustomizers.orderedStream().toList());
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

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "idempotent.web.problem-details", matchIfMissing = true)
	StateTransitionProblemHandler stateTransitionProblemHandler() {
		return new StateTransitionProblemHandler();
	}

}
