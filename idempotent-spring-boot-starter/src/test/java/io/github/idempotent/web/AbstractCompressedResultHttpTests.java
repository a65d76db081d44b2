package io.github.idempotent.web;

import java.net.http.HttpResponse;
import java.util.UUID;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.web.WebTestApplication.Executions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A 2 KB {@code ResponseEntity} body stored compressed in a real store and replayed over
 * HTTP, and the upgrade path both ways: records written with compression off replay once
 * it is on, and the other way round; and records of the earlier layout, the return value
 * typed ({@code V}, or {@code Z} compressed), replay after responses are recorded as
 * written ({@code H}). One subclass per store.
 */
abstract class AbstractCompressedResultHttpTests {

	@LocalServerPort
	private int port;

	@Autowired
	private Executions executions;

	@Autowired
	private IdempotencyExecutor executor;

	private HttpClientSupport http;

	@BeforeEach
	void reset() {
		this.executions.reset();
		this.http = new HttpClientSupport(this.port);
	}

	@AfterEach
	void restoreDefault() {
		this.executor.setResultCompressionThreshold(256);
	}

	/**
	 * The stored result of the record of {@code clientKey} as the store holds it, marker
	 * byte first.
	 */
	abstract byte[] storedResult(String clientKey);

	@Test
	void twoKilobyteBodyIsStoredCompressedAndReplaysIdentically() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<String> first = post(key, "C-1");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(first.body().length()).isGreaterThan(2000);
		byte[] stored = storedResult(key);
		assertRecorded(stored, true);
		assertThat(stored.length).isLessThan(first.body().length() / 2);
		HttpResponse<String> replay = post(key, "C-1");
		assertSameResponse(replay, first);
		assertThat(this.executions.count("large-orders")).isEqualTo(1);
	}

	@Test
	void recordsWrittenUncompressedReplayAfterCompressionIsTurnedOn() throws Exception {
		this.executor.setResultCompressionThreshold(-1);
		String key = UUID.randomUUID().toString();
		HttpResponse<String> first = post(key, "C-2");
		assertThat(first.statusCode()).isEqualTo(201);
		assertRecorded(storedResult(key), false);
		this.executor.setResultCompressionThreshold(256);
		assertSameResponse(post(key, "C-2"), first);
		assertRecorded(storedResult(key), false);
		assertThat(this.executions.count("large-orders")).isEqualTo(1);
	}

	@Test
	void recordsWrittenCompressedReplayAfterCompressionIsTurnedOff() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<String> first = post(key, "C-3");
		assertRecorded(storedResult(key), true);
		this.executor.setResultCompressionThreshold(-1);
		assertSameResponse(post(key, "C-3"), first);
		assertThat(this.executions.count("large-orders")).isEqualTo(1);
	}

	private static void assertRecorded(byte[] stored, boolean deflated) {
		assertThat(stored[0]).as("marker of a recorded response").isEqualTo((byte) 'H');
		assertThat(stored[1]).as("flags: body deflated").isEqualTo((byte) (deflated ? 1 : 0));
	}

	private HttpResponse<String> post(String key, String orderNo) throws Exception {
		return this.http.post("/large-orders", key,
				"{\"orderNo\":\"" + orderNo + "\",\"customer\":\"alice@example.com\",\"items\":24}");
	}

	private static void assertSameResponse(HttpResponse<String> replay, HttpResponse<String> first) {
		assertThat(replay.statusCode()).isEqualTo(first.statusCode());
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
		assertThat(replay.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
	}

}
