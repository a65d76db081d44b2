package io.github.idempotent.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of the client side's {@code RestClient} interceptor.
 *
 * @param enabled Whether to provide an IdempotentRetryInterceptor bean, which RestClients
 * opt into.
 * @param applyToAllRestClients Whether every RestClient.Builder of the application gets
 * the interceptor.
 * @param headerName Request header that carries the key.
 * @param maxRetries Retries after the first attempt; 0 sends the key but never retries.
 * @param delay Back-off before the first retry when the server sends no Retry-After.
 * @param multiplier Factor applied to the back-off after each retry.
 * @param maxDelay Longest back-off between two attempts.
 * @param maxRetryAfter Longest Retry-After honoured; a response asking for longer is
 * returned as is.
 */
@ConfigurationProperties("idempotent.client")
public record IdempotentClientProperties(@DefaultValue("true") boolean enabled, boolean applyToAllRestClients,
		@DefaultValue("Idempotency-Key") String headerName, @DefaultValue("3") long maxRetries,
		@DefaultValue("100ms") Duration delay, @DefaultValue("2") double multiplier,
		@DefaultValue("2s") Duration maxDelay, @DefaultValue("30s") Duration maxRetryAfter) {

}
