package io.github.idempotent.client;

import java.util.function.Supplier;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.support.HttpRequestWrapper;
import org.springframework.util.StringUtils;

/** The request with its idempotency key, fixed once for all attempts. */
final class KeyedRequest extends HttpRequestWrapper {

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
