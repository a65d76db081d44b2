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
 * Provides an {@link IdempotentRetryInterceptor} bean configured from
 * {@code idempotent.client.*}, for the clients that ask for it:
 *
 * <pre class="code">
 * &#64;Bean
 * RestClient payments(RestClient.Builder builder, IdempotentRetryInterceptor idempotentRetry) {
 * 	return builder.baseUrl("https://payments.example").requestInterceptor(idempotentRetry).build();
 * }
 * </pre>
 *
 * The interceptor is not added to other clients: a POST to a third-party API that does
 * not honour idempotency keys must not be retried, since each retry may run again there.
 * {@code idempotent.client.apply-to-all-rest-clients=true} adds it to every
 * {@code RestClient.Builder} Spring Boot hands out, for applications that only talk to
 * servers that do.
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
			.headerName(properties.getHeaderName())
			.maxRetries(properties.getMaxRetries())
			.delay(properties.getDelay())
			.multiplier(properties.getMultiplier())
			.maxDelay(properties.getMaxDelay())
			.maxRetryAfter(properties.getMaxRetryAfter())
			.build();
	}

	// Boot applies every RestClientCustomizer bean to every builder (and to HTTP service
	// clients), so this bean exists only when the application asks for exactly that.
	@Bean
	@ConditionalOnBooleanProperty("idempotent.client.apply-to-all-rest-clients")
	RestClientCustomizer idempotentRetryRestClientCustomizer(IdempotentRetryInterceptor interceptor) {
		return (builder) -> builder.requestInterceptor(interceptor);
	}

}
