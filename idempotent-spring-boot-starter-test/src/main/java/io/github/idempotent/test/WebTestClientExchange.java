package io.github.idempotent.test;

import java.util.function.Function;

import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * One request through {@link WebTestClient}.
 */
final class WebTestClientExchange implements Exchange<Function<WebTestClient, WebTestClient.RequestHeadersSpec<?>>> {

	private final WebTestClient client;

	private final String keyHeader;

	WebTestClientExchange(WebTestClient client, String keyHeader) {
		this.client = client;
		this.keyHeader = keyHeader;
	}

	@Override
	public ExchangedResponse send(Function<WebTestClient, WebTestClient.RequestHeadersSpec<?>> request, String key) {
		EntityExchangeResult<byte[]> result = request.apply(this.client).headers((headers) -> {
			if (!headers.containsHeader(this.keyHeader)) {
				headers.set(this.keyHeader, key);
			}
		}).exchange().expectBody().returnResult();
		return new ExchangedResponse(result.getStatus().value(), result.getResponseHeaders(), result.getResponseBody());
	}

}
