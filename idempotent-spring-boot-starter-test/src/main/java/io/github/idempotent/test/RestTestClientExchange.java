package io.github.idempotent.test;

import java.util.function.Function;

import org.springframework.test.web.servlet.client.EntityExchangeResult;
import org.springframework.test.web.servlet.client.RestTestClient;

/**
 * One request through {@link RestTestClient}.
 */
final class RestTestClientExchange implements Exchange<Function<RestTestClient, RestTestClient.RequestHeadersSpec<?>>> {

	private final RestTestClient client;

	private final String keyHeader;

	RestTestClientExchange(RestTestClient client, String keyHeader) {
		this.client = client;
		this.keyHeader = keyHeader;
	}

	@Override
	public ExchangedResponse send(Function<RestTestClient, RestTestClient.RequestHeadersSpec<?>> request, String key) {
		EntityExchangeResult<byte[]> result = request.apply(this.client).headers((headers) -> {
			if (!headers.containsHeader(this.keyHeader)) {
				headers.set(this.keyHeader, key);
			}
		}).exchange().expectBody().returnResult();
		return new ExchangedResponse(result.getStatus().value(), result.getResponseHeaders(), result.getResponseBody());
	}

}
