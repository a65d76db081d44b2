package io.github.idempotent.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.web.client.RestClient;

import io.github.idempotent.client.IdempotentRetryInterceptor;

/**
 * Adds the {@link IdempotentRetryInterceptor} to every {@code RestClient.Builder} that
 * Spring Boot hands out, when {@code idempotent.client.enabled=true}. Opt-in because it
 * changes every POST and PATCH the application sends; an application that wants it on one
 * client only builds the interceptor itself.
 */
@AutoConfiguration(beforeName = "org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration")
@ConditionalOnClass({ RestClient.class, RestClientCustomizer.class })
@ConditionalOnBooleanProperty("idempotent.client.enabled")
@EnableConfigurationProperties(IdempotentClientProperties.class)
public final class IdempotentClientAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	IdempotentRetryInterceptor idempotentRetryInterceptor(IdempotentClientProperties properties) {
		return IdempotentRetryInterceptor.builder()
			.headerName(properties.getHeaderName())
			.maxRetries(properties.getMaxRetries())
			.delay(properties.getDelay())
			.multiplier(properties.getMultiplier())
			.maxDelay(properties.getMaxDelay())
			.maxRetryAfter(properties.getMaxRetryAfter())
			.build();
	}

	@Bean
	RestClientCustomizer idempotentRetryRestClientCustomizer(IdempotentRetryInterceptor interceptor) {
		return (builder) -> builder.requestInterceptor(interceptor);
	}

}
