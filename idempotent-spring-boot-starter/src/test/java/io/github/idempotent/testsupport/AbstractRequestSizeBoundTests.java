package io.github.idempotent.testsupport;

import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A keyed request whose body is larger than {@code idempotent.web.max-request-size} (here
 * 1KB) is refused with the 413 problem before any store work: the handler does not run
 * and nothing is left in the store, whether the client sent a length or chunks. One
 * subclass per web stack.
 */
public abstract class AbstractRequestSizeBoundTests {

	private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@LocalServerPort
	private int port;

	@Autowired
	private FinalOutcomesController ledger;

	/**
	 * How many records the store holds for {@code clientKey}, read without the starter.
	 */
	protected abstract long records(String clientKey);

	@Test
	void aBodyOverTheBoundIs413AndLeavesNothing() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<String> refused = post(key,
				HttpRequest.BodyPublishers.ofString(body(2048), StandardCharsets.UTF_8));
		assertTooLarge(key, refused);
	}

	@Test
	void aChunkedBodyOverTheBoundIs413AndLeavesNothing() throws Exception {
		String key = UUID.randomUUID().toString();
		byte[] bytes = body(4096).getBytes(StandardCharsets.UTF_8);
		HttpResponse<String> refused = post(key,
				HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(bytes)));
		assertTooLarge(key, refused);
	}

	@Test
	void aBodyUnderTheBoundRuns() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<String> ran = post(key, HttpRequest.BodyPublishers.ofString(body(512), StandardCharsets.UTF_8));
		assertThat(ran.statusCode()).isEqualTo(201);
		assertThat(this.ledger.runs("checked", key)).isEqualTo(1);
		assertThat(records(key)).isEqualTo(1);
	}

	private void assertTooLarge(String key, HttpResponse<String> refused) {
		assertThat(refused.statusCode()).isEqualTo(413);
		assertThat(refused.headers().firstValue("Content-Type"))
			.hasValueSatisfying((type) -> assertThat(type).startsWith("application/problem+json"));
		assertThat(refused.body()).contains("urn:idempotent:request-too-large").doesNotContain("Exception");
		assertThat(this.ledger.runs("checked", key)).isZero();
		assertThat(records(key)).isZero();
	}

	/**
	 * A JSON amount padded to about {@code size} bytes.
	 */
	private static String body(int size) {
		return "{\"amount\":5,\"note\":\"" + "x".repeat(size) + "\"}";
	}

	private HttpResponse<String> post(String key, HttpRequest.BodyPublisher body) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/outcomes/checked"))
			.timeout(Duration.ofSeconds(20))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(body)
			.build();
		return http.send(request, HttpResponse.BodyHandlers.ofString());
	}

}
