package io.github.idempotent.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/** Settings of the client side's {@code RestClient} interceptor. */
@ConfigurationProperties("idempotent.client")
public class IdempotentClientProperties {

	/**
	 * Whether to provide an IdempotentRetryInterceptor bean, which RestClients opt into.
	 */
	private boolean enabled = true;

	/** Whether every RestClient.Builder of the application gets the interceptor. */
	private boolean applyToAllRestClients;

	/** Request header that carries the key. */
	private String headerName = "Idempotency-Key";

	/** Retries after the first attempt; 0 sends the key but never retries. */
	private long maxRetries = 3;

	/** Back-off before the first retry when the server sends no Retry-After. */
	private Duration delay = Duration.ofMillis(100);

	/** Factor applied to the back-off after each retry. */
	private double multiplier = 2;

	/** Longest back-off between two attempts. */
	private Duration maxDelay = Duration.ofSeconds(2);

	/** Longest Retry-After honoured; a response asking for longer is returned as is. */
	private Duration maxRetryAfter = Duration.ofSeconds(30);

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public boolean isApplyToAllRestClients() {
		return this.applyToAllRestClients;
	}

	public void setApplyToAllRestClients(boolean applyToAllRestClients) {
		this.applyToAllRestClients = applyToAllRestClients;
	}

	public String getHeaderName() {
		return this.headerName;
	}

	public void setHeaderName(String headerName) {
		this.headerName = headerName;
	}

	public long getMaxRetries() {
		return this.maxRetries;
	}

	public void setMaxRetries(long maxRetries) {
		this.maxRetries = maxRetries;
	}

	public Duration getDelay() {
		return this.delay;
	}

	public void setDelay(Duration delay) {
		this.delay = delay;
	}

	public double getMultiplier() {
		return this.multiplier;
	}

	public void setMultiplier(double multiplier) {
		this.multiplier = multiplier;
	}

	public Duration getMaxDelay() {
		return this.maxDelay;
	}

	public void setMaxDelay(Duration maxDelay) {
		this.maxDelay = maxDelay;
	}

	public Duration getMaxRetryAfter() {
		return this.maxRetryAfter;
	}

	public void setMaxRetryAfter(Duration maxRetryAfter) {
		this.maxRetryAfter = maxRetryAfter;
	}

}
