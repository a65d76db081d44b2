package io.github.idempotent.client;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.json.JsonFactory;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpRequest;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.http.client.support.HttpRequestWrapper;
import org.springframework.util.Assert;
import org.springframework.util.StringUtils;
import org.springframework.util.backoff.BackOffExecution;
import org.springframework.util.backoff.ExponentialBackOff;

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

	private static final Log logger = LogFactory.getLog(IdempotentRetryInterceptor.class);

	private static final Set<Integer> RETRIED = Set.of(500, 502, 503, 504);

	private static final Set<Integer> RETRIED_WHEN_ASKED = Set.of(409, 429);

	private final String headerName;

	private final Set<HttpMethod> methods;

	private final Supplier<String> keyGenerator;

	private final long maxRetries;

	private final ExponentialBackOff backOff;

	private final Duration maxRetryAfter;

	private IdempotentRetryInterceptor(Builder builder) {
		this.headerName = builder.headerName;
		this.methods = Set.copyOf(builder.methods);
		this.keyGenerator = builder.keyGenerator;
		this.maxRetries = builder.maxRetries;
		this.maxRetryAfter = builder.maxRetryAfter;
		this.backOff = new ExponentialBackOff(builder.delay.toMillis(), builder.multiplier);
		this.backOff.setMaxInterval(builder.maxDelay.toMillis());
		this.backOff.setJitter(builder.delay.toMillis() / 2);
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
		HttpHeaders headers = HttpHeaders.copyOf(request.getHeaders());
		if (!StringUtils.hasText(headers.getFirst(this.headerName))) {
			headers.set(this.headerName, this.keyGenerator.get());
		}
		HttpRequest keyed = new HttpRequestWrapper(request) {

			@Override
			public HttpHeaders getHeaders() {
				return headers;
			}

		};
		BackOffExecution delays = this.backOff.start();
		for (long retries = 0;; retries++) {
			ClientHttpResponse response;
			try {
				response = execution.execute(keyed, body);
				int status = response.getStatusCode().value();
				// 500 is retried: Spring applications answer it for transient failures
				// too. 409 and 429 only with Retry-After, else they are a conflict with
				// the resource's state and a rate limit a back-off would not outlast.
				if (!RETRIED.contains(status) && !(RETRIED_WHEN_ASKED.contains(status)
						&& response.getHeaders().containsHeader(HttpHeaders.RETRY_AFTER))) {
					return response;
				}
				if (status == 500) {
					PeekedResponse peeked = PeekedResponse.of(response);
					if (RESULT_UNAVAILABLE.equals(peeked.problemType())) {
						return peeked;
					}
					response = peeked;
				}
			}
			catch (IOException ex) {
				if (retries == this.maxRetries || !sleep(delays.nextBackOff())) {
					throw ex;
				}
				continue;
			}
			if (retries == this.maxRetries) {
				return response;
			}
			long delay = delays.nextBackOff();
			Duration retryAfter = parseRetryAfter(response.getHeaders().getFirst(HttpHeaders.RETRY_AFTER),
					Instant.now());
			if (retryAfter != null && retryAfter.compareTo(this.maxRetryAfter) > 0) {
				logger.debug("Retry-After of " + retryAfter + " above " + this.maxRetryAfter + ": not retrying");
				return response;
			}
			if (!sleep((retryAfter != null) ? retryAfter.toMillis() : delay)) {
				return response;
			}
			response.close();
		}
	}

	/** {@code false} when interrupted: the last response or failure is the answer. */
	private static boolean sleep(long millis) {
		try {
			Thread.sleep(millis);
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	/** Delta-seconds or an HTTP-date; {@code null} when absent or unreadable. */
	static @Nullable Duration parseRetryAfter(@Nullable String value, Instant now) {
		if (!StringUtils.hasText(value)) {
			return null;
		}
		String text = value.trim();
		// Digits only: Long.parseLong also takes a sign, which delta-seconds never has.
		if (text.chars().allMatch((c) -> c >= '0' && c <= '9')) {
			try {
				return Duration.ofSeconds(Long.parseLong(text));
			}
			catch (NumberFormatException ex) {
				// beyond a long: longer than any limit, never sooner
				return Duration.ofSeconds(Long.MAX_VALUE);
			}
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

	/** A response whose head was read for its problem type, then given back. */
	private record PeekedResponse(ClientHttpResponse response, @Nullable String problemType,
			InputStream body) implements ClientHttpResponse {

		/** How much of a {@code 500} body is read for its problem type. */
		private static final int PROBLEM_PEEK_LIMIT = 8 * 1024;

		private static final JsonFactory JSON = new JsonFactory();

		static PeekedResponse of(ClientHttpResponse response) throws IOException {
			MediaType contentType = response.getHeaders().getContentType();
			if (contentType == null
					|| !("json".equals(contentType.getSubtype()) || "json".equals(contentType.getSubtypeSuffix()))) {
				return new PeekedResponse(response, null, response.getBody());
			}
			try {
				InputStream rest = response.getBody();
				byte[] head = rest.readNBytes(PROBLEM_PEEK_LIMIT);
				return new PeekedResponse(response, problemType(head),
						new SequenceInputStream(new ByteArrayInputStream(head), rest));
			}
			catch (IOException ex) {
				response.close();
				throw ex;
			}
		}

		/** The top-level {@code type} of a JSON object, as far as the head goes. */
		private static @Nullable String problemType(byte[] head) {
			try (JsonParser parser = JSON.createParser(ObjectReadContext.empty(), head)) {
				if (parser.nextToken() != JsonToken.START_OBJECT) {
					return null;
				}
				while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
					String name = parser.currentName();
					JsonToken value = parser.nextToken();
					if ("type".equals(name)) {
						return (value == JsonToken.VALUE_STRING) ? parser.getString() : null;
					}
					parser.skipChildren();
				}
				return null;
			}
			catch (JacksonException ex) {
				return null;
			}
		}

		@Override
		public HttpStatusCode getStatusCode() throws IOException {
			return this.response.getStatusCode();
		}

		@Override
		public String getStatusText() throws IOException {
			return this.response.getStatusText();
		}

		@Override
		public HttpHeaders getHeaders() {
			return this.response.getHeaders();
		}

		@Override
		public InputStream getBody() {
			return this.body;
		}

		@Override
		public void close() {
			this.response.close();
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
