package io.github.idempotent.client;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Set;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.core.retry.RetryPolicy;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpRequest;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.util.StringUtils;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.BackOffExecution;
import org.springframework.util.backoff.ExponentialBackOff;

/** Which responses get another attempt, and when. */
final class RetrySchedule {

	private static final Log logger = LogFactory.getLog(IdempotentRetryInterceptor.class);

	private static final Set<Integer> RETRIED = Set.of(500, 502, 503, 504);

	/** Only with {@code Retry-After}. */
	private static final Set<Integer> RETRIED_WHEN_ASKED = Set.of(409, 429);

	private final long maxRetries;

	private final ExponentialBackOff backOff;

	private final Duration maxRetryAfter;

	RetrySchedule(Duration delay, double multiplier, Duration maxDelay, long maxRetries, Duration maxRetryAfter) {
		this.maxRetries = maxRetries;
		this.maxRetryAfter = maxRetryAfter;
		ExponentialBackOff backOff = new ExponentialBackOff(delay.toMillis(), multiplier);
		backOff.setMaxInterval(maxDelay.toMillis());
		backOff.setJitter(delay.toMillis() / 2);
		this.backOff = backOff;
	}

	Attempts start() {
		return new Attempts();
	}

	/**
	 * {@code 500} is retried because Spring applications answer it for transient failures
	 * too; {@code 409} and {@code 429} only with {@code Retry-After}, else they are a
	 * conflict with the resource's state and a rate limit a back-off would not outlast.
	 */
	private static boolean isRetryable(ClientHttpResponse response) throws IOException {
		int status = response.getStatusCode().value();
		return RETRIED.contains(status) || (RETRIED_WHEN_ASKED.contains(status)
				&& response.getHeaders().containsHeader(HttpHeaders.RETRY_AFTER));
	}

	/** Delta-seconds or an HTTP-date; {@code null} when absent or unreadable. */
	static @Nullable Duration parseRetryAfter(@Nullable String value, Instant now) {
		if (!StringUtils.hasText(value)) {
			return null;
		}
		String text = value.trim();
		try {
			return Duration.ofSeconds(Math.max(0, Long.parseLong(text)));
		}
		catch (NumberFormatException ex) {
			if (text.chars().allMatch((c) -> c >= '0' && c <= '9')) {
				// delta-seconds beyond a long: longer than any limit, never sooner
				return Duration.ofSeconds(Long.MAX_VALUE);
			}
			// not delta-seconds: an HTTP-date
		}
		try {
			Instant when = ZonedDateTime.parse(text, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
			Duration delay = Duration.between(now, when);
			return delay.isNegative() ? Duration.ZERO : delay;
		}
		catch (DateTimeParseException ex) {
			return null;
		}
	}

	/**
	 * One logical call, and its retry policy: the next back-off depends on the last
	 * {@code Retry-After}. A retryable response is kept until the next attempt closes it.
	 */
	final class Attempts implements RetryPolicy, BackOff {

		private @Nullable Duration retryAfter;

		private int attempts;

		@Nullable ClientHttpResponse lastResponse;

		ClientHttpResponse attempt(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
				throws IOException {
			if (this.lastResponse != null) {
				this.lastResponse.close();
				this.lastResponse = null;
			}
			this.retryAfter = null;
			this.attempts++;
			ClientHttpResponse response = execution.execute(request, body);
			if (!isRetryable(response)) {
				return response;
			}
			if (response.getStatusCode().value() == 500) {
				PeekedResponse peeked = PeekedResponse.of(response);
				if (IdempotentRetryInterceptor.RESULT_UNAVAILABLE.equals(peeked.problemType())) {
					return peeked;
				}
				response = peeked;
			}
			this.lastResponse = response;
			this.retryAfter = parseRetryAfter(response.getHeaders().getFirst(HttpHeaders.RETRY_AFTER), Instant.now());
			throw new RetryableResponseException(response.getStatusCode());
		}

		@Override
		public boolean shouldRetry(Throwable throwable) {
			return throwable instanceof IOException || throwable instanceof RetryableResponseException;
		}

		@Override
		public BackOff getBackOff() {
			return this;
		}

		@Override
		public BackOffExecution start() {
			BackOffExecution exponential = RetrySchedule.this.backOff.start();
			return () -> {
				if (this.attempts > RetrySchedule.this.maxRetries) {
					return BackOffExecution.STOP;
				}
				long delay = exponential.nextBackOff();
				if (this.retryAfter != null) {
					if (this.retryAfter.compareTo(RetrySchedule.this.maxRetryAfter) > 0) {
						logger.debug("Retry-After of " + this.retryAfter + " is above the maximum of "
								+ RetrySchedule.this.maxRetryAfter + ": not retrying");
						return BackOffExecution.STOP;
					}
					delay = this.retryAfter.toMillis();
				}
				return delay;
			};
		}

	}

	/** A response whose status calls for a retry; never leaves the interceptor. */
	static final class RetryableResponseException extends RuntimeException {

		RetryableResponseException(HttpStatusCode status) {
			super("Retryable response " + status, null, false, false);
		}

	}

}
