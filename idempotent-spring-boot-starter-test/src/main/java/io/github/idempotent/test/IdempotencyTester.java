package io.github.idempotent.test;

import java.util.function.Function;

import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.RequestBuilder;
import org.springframework.test.web.servlet.client.RestTestClient;
import org.springframework.util.Assert;

/**
 * Sends duplicates of a request to an {@code @Idempotent} endpoint and asserts what the
 * starter promises: the method ran once, every replay is the first response byte for
 * byte, and a key reused with another payload is refused. A bean of the application
 * context in tests that have this module ({@code @WebMvcTest}, {@code @WebFluxTest},
 * {@code @SpringBootTest}):
 *
 * <pre class="code">
 * &#64;Autowired
 * IdempotencyTester idempotency;
 *
 * &#64;Test
 * void paysOnce() {
 *     idempotency.request(mvc, post("/api/payments").contentType(APPLICATION_JSON).content(body))
 *         .sentConcurrently(8)
 *         .assertRanOnce()
 *         .assertReplaysIdentical();
 * }
 * </pre>
 *
 * Each request gets a fresh key in the configured header ({@code Idempotency-Key}),
 * unless it names one itself.
 */
public final class IdempotencyTester {

	private final RecordingIdempotencyObserver calls;

	private final String keyHeader;

	private final String replayedHeader;

	/**
	 * Create a tester over the counts of {@code calls}, the observer of the application
	 * context under test.
	 * @param calls the observer the starter's executor notifies
	 * @param keyHeader the request header of the key ({@code idempotent.web.header-name})
	 * @param replayedHeader the response header that marks a replay
	 * ({@code idempotent.web.replayed-header})
	 */
	public IdempotencyTester(RecordingIdempotencyObserver calls, String keyHeader, String replayedHeader) {
		Assert.notNull(calls, "calls must not be null");
		Assert.hasText(keyHeader, "keyHeader must not be empty");
		Assert.hasText(replayedHeader, "replayedHeader must not be empty");
		this.calls = calls;
		this.keyHeader = keyHeader;
		this.replayedHeader = replayedHeader;
	}

	/**
	 * A request sent through {@link MockMvc}, for example
	 * {@code post("/api/payments").content(body)}.
	 */
	public IdempotentRequest<RequestBuilder> request(MockMvc mvc, RequestBuilder request) {
		Assert.notNull(mvc, "mvc must not be null");
		return new IdempotentRequest<>(new MockMvcExchange(mvc, this.keyHeader), request, this.calls,
				this.replayedHeader);
	}

	/**
	 * A request sent through {@link WebTestClient}, described by a function of the
	 * client, for example
	 * {@code (client) -> client.post().uri("/api/payments").bodyValue(body)}.
	 */
	public IdempotentRequest<Function<WebTestClient, WebTestClient.RequestHeadersSpec<?>>> request(WebTestClient client,
			Function<WebTestClient, WebTestClient.RequestHeadersSpec<?>> request) {
		Assert.notNull(client, "client must not be null");
		return new IdempotentRequest<>(new WebTestClientExchange(client, this.keyHeader), request, this.calls,
				this.replayedHeader);
	}

	/**
	 * A request sent through {@link RestTestClient}, described by a function of the
	 * client, for example
	 * {@code (client) -> client.post().uri("/api/payments").body(body)}.
	 */
	public IdempotentRequest<Function<RestTestClient, RestTestClient.RequestHeadersSpec<?>>> request(
			RestTestClient client, Function<RestTestClient, RestTestClient.RequestHeadersSpec<?>> request) {
		Assert.notNull(client, "client must not be null");
		return new IdempotentRequest<>(new RestTestClientExchange(client, this.keyHeader), request, this.calls,
				this.replayedHeader);
	}

}
