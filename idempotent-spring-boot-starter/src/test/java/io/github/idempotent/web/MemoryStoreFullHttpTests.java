package io.github.idempotent.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.idempotent.web.WebTestApplication.Executions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The in-memory store holds at most {@code idempotent.store.memory.maximum-records}
 * records. Full of live ones, it refuses a new key (503, a problem of its own, the method
 * does not run) rather than evict a result a retry would then run again for, and keeps
 * answering the keys it holds.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT, properties = {
		"idempotent.store.type=memory", "idempotent.store.memory.maximum-records=2", "idempotent.retry-after=3s" })
class MemoryStoreFullHttpTests {

	@LocalServerPort
	private int port;

	@Autowired
	private Executions executions;

	private final HttpClient http = HttpClient.newHttpClient();

	@Test
	void newKeyIsRefusedWhenTheStoreIsFullAndHeldKeysStillReplay() throws Exception {
		assertThat(send("full-1").statusCode()).isEqualTo(201);
		assertThat(send("full-2").statusCode()).isEqualTo(201);
		assertThat(this.executions.count("payments")).isEqualTo(2);

		HttpResponse<String> refused = send("full-3");
		assertThat(refused.statusCode()).isEqualTo(503);
		assertThat(refused.headers().firstValue("Retry-After")).hasValue("3");
		assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(refused.body()).contains("\"type\":\"urn:idempotent:store-full\"");
		assertThat(this.executions.count("payments")).isEqualTo(2);

		HttpResponse<String> replay = send("full-1");
		assertThat(replay.statusCode()).isEqualTo(201);
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.executions.count("payments")).isEqualTo(2);
	}

	private HttpResponse<String> send(String key) throws Exception {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/payments"))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString("{\"orderNo\":\"M-1\",\"amount\":5}"))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

}
