package io.github.idempotent.client;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.io.UncheckedIOException;
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

import org.springframework.core.retry.RetryException;
import org.springframework.core.retry.RetryPolicy;
import org.springframework.core.retry.RetryTemplate;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpRequest;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.http.client.support.HttpRequestWrapper;
import org.springframework.util.Assert;
import org.springframework.util.StringUtils;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.BackOffExecution;
import org.springframework.util.backoff.ExponentialBackOff;

/**
 * {@link ClientHttpRequestInterceptor} for {@code RestClient} that makes a POST or PATCH
 * safe to retry: the request gets one {@code Idempotency-Key} (a random UUID unless the
 * caller set one) for the whole logical call, and every retry sends the same key, so the
 * server runs the operation at most once however many attempts it takes.
 * <p>
 * Retried, with exponential back-off and jitter: I/O errors (connection refused or reset,
 * a response lost before its status line and headers arrive, a read timeout; not a
 * connection that breaks while the caller reads the body, after this interceptor has
 * returned), {@code 500}, {@code 502}, {@code 503} and {@code 504}, and {@code 409} and
 * {@code 429} when they carry {@code Retry-After} (the same key still in progress, or a
 * rate limit that names its end). A {@code Retry-After} header replaces the back-off
 * delay for the next attempt, up to {@link Builder#maxRetryAfter}. Every other status is
 * returned at once: a {@code 409} without {@code Retry-After} is a conflict with the
 * resource's state, such as an illegal state transition, and a {@code 501} or {@code 505}
 * says what the server cannot do; no retry fixes either. So is a {@code 500} whose
 * problem type is {@value #RESULT_UNAVAILABLE}: the server holds a result for the key
 * that it cannot read, and will answer the same for as long as it keeps it. When the
 * attempts run out, the last response is returned (so {@code RestClient}'s status
 * handlers see it) or the last I/O error is thrown.
 * <p>
 * Add it only to clients of servers that honour idempotency keys: elsewhere each retry of
 * a POST may run the operation again.
 * <p>
 * The retries run on Spring Framework's {@link RetryTemplate}.
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
	 * cannot read (a damaged record): the key's outcome is fixed, so a retry with the
	 * same key gets the same answer until the record expires. Spelled out here rather
	 * than shared with the web package, which a client of someone else's API does not
	 * need.
	 */
	public static final String RESULT_UNAVAILABLE = "urn:idempotent:result-unavailable";

	/**
	 * How much of a {@code 500} body is read to find its problem type. A problem of this
	 * starter is a few hundred bytes with {@code type} first; a longer body is not read
	 * further, and the caller gets it whole all the same.
	 */
	private static final int PROBLEM_PEEK_LIMIT = 8 * 1024;

	private static final JsonFactory JSON = new JsonFactory();

	private static final Log logger = LogFactory.getLog(IdempotentRetryInterceptor.class);

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
		ExponentialBackOff backOff = new ExponentialBackOff(builder.delay.toMillis(), builder.multiplier);
		backOff.setMaxInterval(builder.maxDelay.toMillis());
		backOff.setJitter(builder.delay.toMillis() / 2);
		this.backOff = backOff;
	}

	/**
	 * Interceptor with the defaults: POST and PATCH, {@code Idempotency-Key}, 3 retries
	 * starting at 100 ms, doubling, at most 2 s apart, {@code Retry-After} honoured up to
	 * 30 s.
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
		Call call = new Call();
		RetryTemplate retryTemplate = new RetryTemplate(call);
		try {
			return retryTemplate.execute(() -> call.attempt(keyed, body, execution));
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

	/**
	 * Whether the status says that the same request may succeed later. Most 5xx do not:
	 * {@code 501}, {@code 505} and the like describe the server or the request, and a
	 * retry only repeats them. {@code 500} is retried because Spring applications answer
	 * it for transient failures too (a deadlock, a dropped database connection), and an
	 * {@code @Idempotent} server releases the key of a failed call precisely so that it
	 * may be retried. {@code 409} and {@code 429} are retried only when the server says
	 * when, with {@code Retry-After}: without it, a 409 is a conflict with the resource's
	 * state and a 429 a rate limit whose window a short back-off would not outlast.
	 */
	private static boolean isRetryable(ClientHttpResponse response) throws IOException {
		HttpStatusCode status = response.getStatusCode();
		if (status.isSameCodeAs(HttpStatus.INTERNAL_SERVER_ERROR) || status.isSameCodeAs(HttpStatus.BAD_GATEWAY)
				|| status.isSameCodeAs(HttpStatus.SERVICE_UNAVAILABLE)
				|| status.isSameCodeAs(HttpStatus.GATEWAY_TIMEOUT)) {
			return true;
		}
		return (status.isSameCodeAs(HttpStatus.CONFLICT) || status.isSameCodeAs(HttpStatus.TOO_MANY_REQUESTS))
				&& response.getHeaders().containsHeader(HttpHeaders.RETRY_AFTER);
	}

	/**
	 * Delay asked for by a {@code Retry-After} header, in delta-seconds or as an
	 * HTTP-date; {@code null} when absent or unreadable.
	 */
	static @Nullable Duration parseRetryAfter(@Nullable String value, Instant now) {
		if (!StringUtils.hasText(value)) {
			return null;
		}
		String text = value.trim();
		try {
			return Duration.ofSeconds(Math.max(0, Long.parseLong(text)));
		}
		catch (NumberFormatException ex) {
			if (!text.isEmpty() && text.chars().allMatch((c) -> c >= '0' && c <= '9')) {
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
	 * State of one logical call across its attempts; also its retry policy, since the
	 * back-off of the next attempt depends on the last response's {@code Retry-After}.
	 */
	private final class Call implements RetryPolicy, BackOff {

		private @Nullable ClientHttpResponse lastResponse;

		private @Nullable Duration retryAfter;

		private int attempts;

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
			if (response.getStatusCode().isSameCodeAs(HttpStatus.INTERNAL_SERVER_ERROR)) {
				PeekedResponse peeked = PeekedResponse.of(response);
				if (RESULT_UNAVAILABLE.equals(peeked.problemType())) {
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
			BackOffExecution exponential = IdempotentRetryInterceptor.this.backOff.start();
			return () -> {
				if (this.attempts > IdempotentRetryInterceptor.this.maxRetries) {
					return BackOffExecution.STOP;
				}
				long delay = exponential.nextBackOff();
				if (this.retryAfter != null) {
					if (this.retryAfter.compareTo(IdempotentRetryInterceptor.this.maxRetryAfter) > 0) {
						logger.debug("Retry-After of " + this.retryAfter + " is above the maximum of "
								+ IdempotentRetryInterceptor.this.maxRetryAfter + ": not retrying");
						return BackOffExecution.STOP;
					}
					delay = this.retryAfter.toMillis();
				}
				return delay;
			};
		}

	}

	/**
	 * A response whose head of the body has been read to find its problem type, and is
	 * given back in front of the rest, so the caller reads the body as it was sent.
	 */
	private static final class PeekedResponse implements ClientHttpResponse {

		private final ClientHttpResponse response;

		private final @Nullable String problemType;

		private final InputStream body;

		private PeekedResponse(ClientHttpResponse response, @Nullable String problemType, InputStream body) {
			this.response = response;
			this.problemType = problemType;
			this.body = body;
		}

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

		/**
		 * The top-level {@code type} of a JSON object, read as far as the head goes: a
		 * cut or malformed body simply has none.
		 */
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

		@Nullable String problemType() {
			return this.problemType;
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

	/**
	 * A response whose status calls for a retry; never leaves the interceptor.
	 */
	private static final class RetryableResponseException extends RuntimeException {

		RetryableResponseException(HttpStatusCode status) {
			super("Retryable response " + status, null, false, false);
		}

	}

	/**
	 * The request with its idempotency key, fixed once for all attempts.
	 */
	private static final class KeyedRequest extends HttpRequestWrapper {

		private final HttpHeaders headers;

		KeyedRequest(HttpRequest request, String headerName, Supplier<String> keyGenerator) {
			super(request);
			this.headers = new HttpHeaders();
			this.headers.putAll(request.getHeaders());
			if (!StringUtils.hasText(this.headers.getFirst(headerName))) {
				this.headers.set(headerName, keyGenerator.get());
			}
		}

		@Override
		public HttpHeaders getHeaders() {
			return this.headers;
		}

	}

	/**
	 * Settings of an {@link IdempotentRetryInterceptor}.
	 */
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

		/**
		 * Header that carries the key. Default {@code Idempotency-Key}.
		 */
		public Builder headerName(String headerName) {
			Assert.hasText(headerName, "headerName must not be empty");
			this.headerName = headerName;
			return this;
		}

		/**
		 * Methods that get a key and retries. Default POST and PATCH; the others are
		 * passed through untouched.
		 */
		public Builder methods(HttpMethod... methods) {
			Assert.notEmpty(methods, "methods must not be empty");
			this.methods = Set.of(methods);
			return this;
		}

		/**
		 * Source of new keys. Default random UUIDs.
		 */
		public Builder keyGenerator(Supplier<String> keyGenerator) {
			Assert.notNull(keyGenerator, "keyGenerator must not be null");
			this.keyGenerator = keyGenerator;
			return this;
		}

		/**
		 * Retries after the first attempt. Default 3; 0 sends the key but never retries.
		 */
		public Builder maxRetries(long maxRetries) {
			Assert.isTrue(maxRetries >= 0, "maxRetries must not be negative");
			this.maxRetries = maxRetries;
			return this;
		}

		/**
		 * Delay before the first retry when the server names none. Default 100 ms.
		 */
		public Builder delay(Duration delay) {
			Assert.isTrue(delay != null && !delay.isNegative(), "delay must not be negative");
			this.delay = delay;
			return this;
		}

		/**
		 * Factor applied to the delay after each retry. Default 2.
		 */
		public Builder multiplier(double multiplier) {
			Assert.isTrue(multiplier >= 1, "multiplier must be at least 1");
			this.multiplier = multiplier;
			return this;
		}

		/**
		 * Longest back-off delay. Default 2 s.
		 */
		public Builder maxDelay(Duration maxDelay) {
			Assert.isTrue(maxDelay != null && !maxDelay.isNegative(), "maxDelay must not be negative");
			this.maxDelay = maxDelay;
			return this;
		}

		/**
		 * Longest {@code Retry-After} honoured; a response asking for longer is returned
		 * to the caller instead. Default 30 s.
		 */
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
