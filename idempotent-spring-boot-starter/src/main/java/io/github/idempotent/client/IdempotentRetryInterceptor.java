package io.github.idempotent.client;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;

import org.springframework.core.retry.RetryException;
import org.springframework.core.retry.RetryTemplate;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.util.Assert;

/**
 * {@link ClientHttpRequestInterceptor} for {@code RestClient} that makes a POST or PATCH
 * safe to retry: the request gets one {@code Idempotency-Key} (a random UUID unless the
 * caller set one) for the whole logical call, and every retry sends the same key.
 * <p>
 * Retried with exponential back-off and jitter: I/O errors, {@code 500} (unless its
 * problem type is {@value #RESULT_UNAVAILABLE}), {@code 502}, {@code 503}, {@code 504},
 * and {@code 409} and {@code 429} with {@code Retry-After}, which replaces the back-off
 * up to {@link Builder#maxRetryAfter}. When the attempts run out, the last response is
 * returned or the last I/O error thrown. Add it only to clients of servers that honour
 * idempotency keys.
 *
 * <pre class="code">
 * RestClient client = RestClient.builder()
 * 	.baseUrl("http://localhost:8080")
 * 	.requestInterceptor(IdempotentRetryInterceptor.builder().maxRetries(5).build())
 * 	.build();
 * </pre>
 */
public final class IdempotentRetryInterceptor implements ClientHttpRequestInterceptor {

	/**
	 * Problem type of an {@code @Idempotent} server's {@code 500} for a stored result it
	 * cannot read: a retry with the same key gets the same answer.
	 */
	public static final String RESULT_UNAVAILABLE = "urn:idempotent:result-unavailable";

	private final String headerName;

	private final Set<HttpMethod> methods;

	private final Supplier<String> keyGenerator;

	private final RetrySchedule schedule;

	private IdempotentRetryInterceptor(Builder builder) {
		this.headerName = builder.headerName;
		this.methods = Set.copyOf(builder.methods);
		this.keyGenerator = builder.keyGenerator;
		this.schedule = new RetrySchedule(builder.delay, builder.multiplier, builder.maxDelay, builder.maxRetries,
				builder.maxRetryAfter);
	}

	/**
	 * Interceptor with the defaults: POST and PATCH, {@code Idempotency-Key}, 3 retries
	 * from 100 ms, doubling, at most 2 s apart, {@code Retry-After} honoured up to 30 s.
	 */
	public static IdempotentRetryInterceptor withDefaults() {
		return builder().build();
	}

	public static Builder builder() {
		return new Builder();
	}

	@Override
	public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
			throws IOException {
		if (!this.methods.contains(request.getMethod())) {
			return execution.execute(request, body);
		}
		KeyedRequest keyed = new KeyedRequest(request, this.headerName, this.keyGenerator);
		RetrySchedule.Attempts call = this.schedule.start();
		try {
			return new RetryTemplate(call).execute(() -> call.attempt(keyed, body, execution));
		}
		catch (RetryException ex) {
			if (call.lastResponse != null) {
				return call.lastResponse;
			}
			Throwable last = ex.getLastException();
			if (last instanceof IOException io) {
				throw io;
			}
			if (last instanceof RuntimeException runtime) {
				throw runtime;
			}
			throw new UncheckedIOException(new IOException(last));
		}
	}

	/** Settings of an {@link IdempotentRetryInterceptor}. */
	public static final class Builder {

		private String headerName = "Idempotency-Key";

		private Set<HttpMethod> methods = Set.of(HttpMethod.POST, HttpMethod.PATCH);

		private Supplier<String> keyGenerator = () -> UUID.randomUUID().toString();

		private long maxRetries = 3;

		private Duration delay = Duration.ofMillis(100);

		private double multiplier = 2;

		private Duration maxDelay = Duration.ofSeconds(2);

		private Duration maxRetryAfter = Duration.ofSeconds(30);

		private Builder() {
		}

		/** Header that carries the key. Default {@code Idempotency-Key}. */
		public Builder headerName(String headerName) {
			Assert.hasText(headerName, "headerName must not be empty");
			this.headerName = headerName;
			return this;
		}

		/** Methods that get a key and retries. Default POST and PATCH. */
		public Builder methods(HttpMethod... methods) {
			Assert.notEmpty(methods, "methods must not be empty");
			this.methods = Set.of(methods);
			return this;
		}

		/** Source of new keys. Default random UUIDs. */
		public Builder keyGenerator(Supplier<String> keyGenerator) {
			Assert.notNull(keyGenerator, "keyGenerator must not be null");
			this.keyGenerator = keyGenerator;
			return this;
		}

		/** Retries after the first attempt; 0 never retries. Default 3. */
		public Builder maxRetries(long maxRetries) {
			Assert.isTrue(maxRetries >= 0, "maxRetries must not be negative");
			this.maxRetries = maxRetries;
			return this;
		}

		/** Delay before the first retry when the server names none. Default 100 ms. */
		public Builder delay(Duration delay) {
			Assert.isTrue(delay != null && !delay.isNegative(), "delay must not be negative");
			this.delay = delay;
			return this;
		}

		/** Factor applied to the delay after each retry. Default 2. */
		public Builder multiplier(double multiplier) {
			Assert.isTrue(multiplier >= 1, "multiplier must be at least 1");
			this.multiplier = multiplier;
			return this;
		}

		/** Longest back-off delay. Default 2 s. */
		public Builder maxDelay(Duration maxDelay) {
			Assert.isTrue(maxDelay != null && !maxDelay.isNegative(), "maxDelay must not be negative");
			this.maxDelay = maxDelay;
			return this;
		}

		/** Longest {@code Retry-After} honoured. Default 30 s. */
		public Builder maxRetryAfter(Duration maxRetryAfter) {
			Assert.isTrue(maxRetryAfter != null && !maxRetryAfter.isNegative(), "maxRetryAfter must not be negative");
			this.maxRetryAfter = maxRetryAfter;
			return this;
		}

		public IdempotentRetryInterceptor build() {
			return new IdempotentRetryInterceptor(this);
		}

	}

}
