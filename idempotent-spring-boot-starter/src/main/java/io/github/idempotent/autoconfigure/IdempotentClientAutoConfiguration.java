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
 * Provides an {@link IdempotentRetryInterceptor} bean from {@code idempotent.client.*}
 * for the clients that ask for it; added to every {@code RestClient.Builder} only with
 * {@code apply-to-all-rest-clients}, since a server that does not honour keys may run a
 * retried POST again.
 */
@AutoConfiguration(beforeName = "org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration")
@ConditionalOnClass({ RestClient.class, RestClientCustomizer.class })
@ConditionalOnBooleanProperty(name = "idempotent.client.enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdempotentClientProperties.class)
public final class IdempotentClientAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	IdempotentRetryInterceptor idempotentRetryInterceptor(IdempotentClientProperties properties) {
		return IdempotentRetryInterceptor.builder()
			.headerName(properties.headerName())
			.maxRetries(properties.maxRetries())
			.delay(properties.delay())
			.multiplier(properties.multiplier())
			.maxDelay(properties.maxDelay())
			.maxRetryAfter(properties.maxRetryAfter())
			.build();
	}

	// Boot applies every RestClientCustomizer to every builder: only when asked.
	@Bean
	@ConditionalOnBooleanProperty("idempotent.client.apply-to-all-rest-clients")
	RestClientCustomizer idempotentRetryRestClientCustomizer(IdempotentRetryInterceptor interceptor) {
		return (builder) -> builder.requestInterceptor(interceptor);
	}

}
