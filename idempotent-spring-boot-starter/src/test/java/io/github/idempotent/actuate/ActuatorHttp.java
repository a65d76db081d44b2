package io.github.idempotent.actuate;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

import org.jspecify.annotations.Nullable;

/**
 * Requests to the test application and its actuator over real HTTP.
 */
final class ActuatorHttp {

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private final int port;

	ActuatorHttp(int port) {
		this.port = port;
	}

	HttpClient http() {
		return this.http;
	}

	HttpResponse<String> send(HttpRequest request) throws Exception {
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

	HttpRequest post(String path, String key, @Nullable String user) {
		HttpRequest.Builder builder = HttpRequest.newBuilder(uri(path))
			.timeout(Duration.ofSeconds(40))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"espresso\"}"));
		return withUser(builder, user).build();
	}

	HttpRequest get(String path) {
		return HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(20)).GET().build();
	}

	HttpRequest get(String path, String user) {
		return withUser(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(20)).GET(), user).build();
	}

	HttpRequest delete(String path) {
		return HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(20)).DELETE().build();
	}

	private static HttpRequest.Builder withUser(HttpRequest.Builder builder, @Nullable String user) {
		if (user != null) {
			builder.header("Authorization", "Basic "
					+ Base64.getEncoder().encodeToString((user + ":" + user).getBytes(StandardCharsets.UTF_8)));
		}
		return builder;
	}

	URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

}
