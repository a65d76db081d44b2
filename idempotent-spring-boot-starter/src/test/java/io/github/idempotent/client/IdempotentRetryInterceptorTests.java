package io.github.idempotent.client;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.HttpServerErrorException;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link IdempotentRetryInterceptor} against a real HTTP server that stores one result
 * per key, as an {@code @Idempotent} endpoint does, and misbehaves on request.
 */
class IdempotentRetryInterceptorTests {

	private HttpServer server;

	private final Deque<Fault> faults = new ArrayDeque<>();

	private final List<String> keys = new CopyOnWriteArrayList<>();

	private final Map<String, String> results = new ConcurrentHashMap<>();

	private final AtomicInteger executions = new AtomicInteger();

	private RestClient client;

	@BeforeEach
	void startServer() throws IOException {
		this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
		this.server.createContext("/", this::handle);
		this.server.start();
		this.client = client(IdempotentRetryInterceptor.builder().delay(Duration.ofMillis(10)).build());
	}

	@AfterEach
	void stopServer() {
		this.server.stop(0);
	}

	private RestClient client(IdempotentRetryInterceptor interceptor) {
		return RestClient.builder()
			.requestFactory(new JdkClientHttpRequestFactory())
			.baseUrl("http://127.0.0.1:" + this.server.getAddress().getPort())
			.requestInterceptor(interceptor)
			.build();
	}

	private void handle(HttpExchange exchange) throws IOException {
		try (InputStream in = exchange.getRequestBody()) {
			in.readAllBytes();
		}
		String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
		this.keys.add(String.valueOf(key));
		Fault fault;
		synchronized (this.faults) {
			fault = this.faults.poll();
		}
		if (fault != null && fault.status() > 0) {
			if (fault.retryAfter() != null) {
				exchange.getResponseHeaders().set("Retry-After", fault.retryAfter());
			}
			send(exchange, fault.status(), fault.contentType(),
					(fault.body() != null) ? fault.body() : "{\"error\":" + fault.status() + "}");
			return;
		}
		String result = (key != null)
				? this.results.computeIfAbsent(key, (k) -> "{\"execution\":" + this.executions.incrementAndGet() + "}")
				: "{\"execution\":" + this.executions.incrementAndGet() + "}";
		if (fault != null) {
			// The operation ran and its result is stored, but the answer never reaches
			// the client: the connection closes before a status line is sent.
			exchange.close();
			return;
		}
		send(exchange, 200, "application/json", result);
	}

	private static void send(HttpExchange exchange, int status, String contentType, String body) throws IOException {
		byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
		exchange.getResponseHeaders().set("Content-Type", contentType);
		exchange.sendResponseHeaders(status, bytes.length);
		exchange.getResponseBody().write(bytes);
		exchange.close();
	}

	private void fault(Fault fault) {
		synchronized (this.faults) {
			this.faults.add(fault);
		}
	}

	private String post() {
		return this.client.post().uri("/payments").body("{\"orderNo\":\"A-1\"}").retrieve().body(String.class);
	}

	/**
	 * A POST whose error status is handed back instead of thrown.
	 */
	private ResponseEntity<String> postForEntity() {
		return this.client.post().uri("/payments").body("{}").retrieve().onStatus((status) -> true, (request, resp) -> {
		}).toEntity(String.class);
	}

	@Test
	void lostResponseIsRetriedWithTheSameKeyAndRunsOnce() {
		fault(Fault.DROP);
		assertThat(post()).isEqualTo("{\"execution\":1}");
		assertThat(this.keys).hasSize(2);
		assertThat(this.keys.get(0)).isNotEqualTo("null").isEqualTo(this.keys.get(1));
		assertThat(this.executions).hasValue(1);
	}

	@Test
	void eachLogicalCallGetsItsOwnKey() {
		post();
		post();
		assertThat(this.keys).hasSize(2).doesNotHaveDuplicates();
		assertThat(this.executions).hasValue(2);
	}

	@Test
	void callersKeyIsKept() {
		fault(Fault.DROP);
		String body = this.client.post()
			.uri("/payments")
			.header("Idempotency-Key", "order-42")
			.body("{}")
			.retrieve()
			.body(String.class);
		assertThat(body).isEqualTo("{\"execution\":1}");
		assertThat(this.keys).containsExactly("order-42", "order-42");
	}

	@Test
	void serviceUnavailableHonoursRetryAfter() {
		fault(new Fault(503, "1"));
		long start = System.nanoTime();
		assertThat(post()).isEqualTo("{\"execution\":1}");
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(950));
		assertThat(this.keys).hasSize(2).containsOnly(this.keys.get(0));
	}

	@Test
	void transientServerErrorsAndInProgressConflictsAreRetried() {
		this.client = client(IdempotentRetryInterceptor.builder().maxRetries(5).delay(Duration.ZERO).build());
		fault(new Fault(500, null));
		fault(new Fault(409, "0"));
		fault(new Fault(502, null));
		fault(new Fault(503, null));
		fault(new Fault(504, null));
		assertThat(post()).isEqualTo("{\"execution\":1}");
		assertThat(this.keys).hasSize(6).containsOnly(this.keys.get(0));
	}

	@ParameterizedTest
	@ValueSource(ints = { 501, 505, 506, 507, 508, 510, 511 })
	void serverErrorsThatNoRetryFixesAreReturnedAtOnce(int status) {
		fault(new Fault(status, null));
		ResponseEntity<String> response = postForEntity();
		assertThat(response.getStatusCode().value()).isEqualTo(status);
		assertThat(this.keys).hasSize(1);
		assertThat(this.executions).hasValue(0);
	}

	@Test
	void retryAfterThatIsNoDelayLeavesTheBackOffAsItIs() {
		this.client = client(IdempotentRetryInterceptor.builder().delay(Duration.ofMillis(500)).build());
		fault(new Fault(503, "-5"));
		long start = System.nanoTime();
		assertThat(post()).isEqualTo("{\"execution\":1}");
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
		assertThat(this.keys).hasSize(2).containsOnly(this.keys.get(0));
	}

	@Test
	void tooManyRequestsIsRetriedWhenTheServerSaysWhen() {
		fault(new Fault(429, "0"));
		assertThat(post()).isEqualTo("{\"execution\":1}");
		assertThat(this.keys).hasSize(2).containsOnly(this.keys.get(0));
	}

	@Test
	void tooManyRequestsWithoutRetryAfterIsReturnedAtOnce() {
		fault(new Fault(429, null));
		assertThat(postForEntity().getStatusCode()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(this.keys).hasSize(1);
	}

	@Test
	void conflictWithoutRetryAfterIsNotRetried() {
		fault(new Fault(409, null));
		assertThat(postForEntity().getStatusCode()).isEqualTo(HttpStatus.CONFLICT);
		assertThat(this.keys).hasSize(1);
	}

	@Test
	void lastResponseIsReturnedWhenRetriesRunOut() {
		for (int i = 0; i < 4; i++) {
			fault(new Fault(503, null));
		}
		assertThatExceptionOfType(HttpServerErrorException.ServiceUnavailable.class).isThrownBy(this::post);
		assertThat(this.keys).hasSize(4).containsOnly(this.keys.get(0));
		assertThat(this.executions).hasValue(0);
	}

	@Test
	void retryAfterAboveTheMaximumIsReturnedAtOnce() {
		this.client = client(IdempotentRetryInterceptor.builder().maxRetryAfter(Duration.ofSeconds(5)).build());
		fault(new Fault(503, "60"));
		assertThatExceptionOfType(HttpServerErrorException.ServiceUnavailable.class).isThrownBy(this::post);
		assertThat(this.keys).hasSize(1);
	}

	@Test
	void connectionErrorIsThrownWhenRetriesRunOut() {
		this.server.stop(0);
		RestClient client = client(IdempotentRetryInterceptor.builder().maxRetries(2).delay(Duration.ZERO).build());
		assertThatExceptionOfType(ResourceAccessException.class)
			.isThrownBy(() -> client.post().uri("/payments").body("{}").retrieve().toBodilessEntity());
	}

	@Test
	void getIsPassedThroughWithoutKey() {
		fault(new Fault(503, null));
		assertThatExceptionOfType(HttpServerErrorException.class)
			.isThrownBy(() -> this.client.get().uri("/payments/1").retrieve().body(String.class));
		assertThat(this.keys).containsExactly("null");
	}

	@Test
	void retryAfterTooLargeForALongIsReturnedAtOnce() {
		fault(new Fault(503, "99999999999999999999"));
		assertThatExceptionOfType(HttpServerErrorException.ServiceUnavailable.class).isThrownBy(this::post);
		assertThat(this.keys).hasSize(1);
	}

	@Test
	void resultUnavailableIsReturnedAtOnceWithItsBody() {
		// What an @Idempotent server answers for a damaged record: the same for every
		// retry with this key, so retrying only delays the answer.
		String problem = problem("urn:idempotent:result-unavailable");
		fault(new Fault(500, null, "application/problem+json", problem));
		fault(new Fault(500, null, "application/problem+json", problem));
		ResponseEntity<String> response = postForEntity();
		assertThat(this.keys).hasSize(1);
		assertThat(response.getStatusCode()).isEqualTo(HttpStatus.INTERNAL_SERVER_ERROR);
		assertThat(response.getBody()).isEqualTo(problem);
		assertThat(this.executions).hasValue(0);
	}

	@Test
	void resultUnavailableWithALongBodyIsReturnedWhole() {
		String problem = "{\"type\":\"urn:idempotent:result-unavailable\",\"detail\":\"" + "x".repeat(20_000) + "\"}";
		fault(new Fault(500, null, "application/problem+json", problem));
		ResponseEntity<String> response = postForEntity();
		assertThat(this.keys).hasSize(1);
		assertThat(response.getBody()).isEqualTo(problem);
	}

	@Test
	void serverErrorProblemOfAnotherTypeIsStillRetried() {
		fault(new Fault(500, null, "application/problem+json", problem("about:blank")));
		fault(new Fault(500, null, "application/problem+json",
				"{\"title\":\"x\",\"extra\":{\"type\":\"urn:idempotent:result-unavailable\"}}"));
		fault(new Fault(500, null, "text/plain", "urn:idempotent:result-unavailable"));
		assertThat(post()).isEqualTo("{\"execution\":1}");
		assertThat(this.keys).hasSize(4).containsOnly(this.keys.get(0));
	}

	private static String problem(String type) {
		return "{\"type\":\"" + type + "\",\"title\":\"Stored result unavailable\",\"status\":500,"
				+ "\"detail\":\"The stored result of this request cannot be read.\",\"instance\":\"/payments\"}";
	}

	@Test
	void retryAfterIsReadAsSecondsOrHttpDate() {
		Instant now = Instant.parse("2026-01-01T00:00:00Z");
		assertThat(IdempotentRetryInterceptor.parseRetryAfter("2", now)).isEqualTo(Duration.ofSeconds(2));
		String inFive = DateTimeFormatter.RFC_1123_DATE_TIME.format(now.plusSeconds(5).atOffset(ZoneOffset.UTC));
		assertThat(IdempotentRetryInterceptor.parseRetryAfter(inFive, now)).isEqualTo(Duration.ofSeconds(5));
		assertThat(IdempotentRetryInterceptor.parseRetryAfter("soon", now)).isNull();
		assertThat(IdempotentRetryInterceptor.parseRetryAfter("-5", now)).isNull();
		assertThat(IdempotentRetryInterceptor.parseRetryAfter("+5", now)).isNull();
		assertThat(IdempotentRetryInterceptor.parseRetryAfter(null, now)).isNull();
	}

	/**
	 * What the server does to one request: answer with a status (and a body of its own),
	 * or drop the response.
	 */
	private record Fault(int status, String retryAfter, String contentType, String body) {

		static final Fault DROP = new Fault(0, null);

		Fault(int status, String retryAfter) {
			this(status, retryAfter, "application/json", null);
		}

	}

}
