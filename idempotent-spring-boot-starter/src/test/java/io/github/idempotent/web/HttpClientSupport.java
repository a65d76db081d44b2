package io.github.idempotent.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * JSON POSTs to the test application over real HTTP, with or without an
 * {@code Idempotency-Key} header.
 */
final class HttpClientSupport {

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private final int port;

	HttpClientSupport(int port) {
		this.port = port;
	}

	HttpResponse<String> post(String path, @Nullable String key, String body) throws Exception {
		return this.http.send(request(path, key, body), HttpResponse.BodyHandlers.ofString());
	}

	HttpRequest request(String path, @Nullable String key, String body) {
		HttpRequest.Builder request = HttpRequest.newBuilder(uri(path))
			.timeout(Duration.ofSeconds(20))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body));
		if (key != null) {
			request.header("Idempotency-Key", key);
		}
		return request.build();
	}

	URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

	HttpClient client() {
		return this.http;
	}

}
