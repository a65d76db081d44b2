package io.github.idempotent.web;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.UUID;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.idempotent.web.WebTestApplication.Executions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A record damaged in a real store after its call completed, replayed over HTTP: the
 * answer is the {@code result-unavailable} problem, the method does not run again, and
 * the log has one warning that names the record and its damage. One subclass per store;
 * the damage every store can suffer (its result column or bytes) is here.
 */
@ExtendWith(OutputCaptureExtension.class)
abstract class AbstractDamagedRecordHttpTests {

	static final String PAYMENT = "{\"orderNo\":\"D-1\",\"amount\":1250}";

	@LocalServerPort
	private int port;

	@Autowired
	private Executions executions;

	private HttpClientSupport http;

	@BeforeEach
	void reset() {
		this.executions.reset();
		this.http = new HttpClientSupport(this.port);
	}

	/**
	 * The key of the record of {@code clientKey} in the store.
	 */
	abstract String recordKey(String clientKey);

	/**
	 * The stored result of the record of {@code clientKey}, marker byte first.
	 */
	abstract byte[] storedResult(String clientKey);

	/**
	 * Replaces the stored result of the completed record of {@code clientKey}.
	 */
	abstract void storeResult(String clientKey, byte[] result);

	@Test
	void resultOfGarbageBytesIsResultUnavailable(CapturedOutput output) throws Exception {
		String key = completedPayment();
		// Not 0x01 to 0x1F: those mark a record of a later format, answered "retry
		// later".
		storeResult(key, "\u00ff\u0001garbage{\"id\"".getBytes(StandardCharsets.ISO_8859_1));
		assertResultUnavailable(post("/payments", key, PAYMENT), "payments");
		assertOneWarning(output, key, "0xff");
	}

	@Test
	void storedErrorWithoutItsMessageLineIsResultUnavailable(CapturedOutput output) throws Exception {
		String key = completedPayment();
		storeResult(key, "Ejava.lang.IllegalStateException".getBytes(StandardCharsets.UTF_8));
		assertResultUnavailable(post("/payments", key, PAYMENT), "payments");
		assertOneWarning(output, key, "stored error");
	}

	@Test
	void brokenCompressionIsResultUnavailable(CapturedOutput output) throws Exception {
		String key = UUID.randomUUID().toString();
		String order = "{\"orderNo\":\"D-2\",\"customer\":\"alice@example.com\",\"items\":24}";
		assertThat(post("/large-orders", key, order).statusCode()).isEqualTo(201);
		byte[] stored = storedResult(key);
		assertThat(stored[0]).isEqualTo((byte) 'H');
		assertThat(stored[1]).as("body deflated").isEqualTo((byte) 1);
		// Status and headers kept, the end of the deflated body overwritten.
		byte[] broken = stored.clone();
		Arrays.fill(broken, broken.length - 64, broken.length, (byte) 0xFF);
		storeResult(key, broken);
		assertResultUnavailable(post("/large-orders", key, order), "large-orders");
		assertOneWarning(output, key, "recorded response cannot be read");
	}

	@Test
	void anOutcomeOfALaterFormatIsRetryLaterNeverDamagedNorRunAgain(CapturedOutput output) throws Exception {
		// Written by a newer version during a rolling upgrade: a retry may reach it.
		String key = completedPayment();
		storeResult(key, new byte[] { 0x02, 'n', 'e', 'w' });
		assertWrittenByANewerVersion(post("/payments", key, PAYMENT), "payments");
		assertOneWarning(output, key, "written by a newer version");
	}

	/**
	 * A payment that completed once under a new key, returned.
	 */
	String completedPayment() throws Exception {
		String key = UUID.randomUUID().toString();
		assertThat(post("/payments", key, PAYMENT).statusCode()).isEqualTo(201);
		assertThat(this.executions.count("payments")).isEqualTo(1);
		return key;
	}

	HttpResponse<String> post(String path, String key, String body) throws Exception {
		return this.http.post(path, key, body);
	}

	void assertResultUnavailable(HttpResponse<String> response, String endpoint) {
		assertThat(response.statusCode()).isEqualTo(500);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(response.body()).contains("\"type\":\"urn:idempotent:result-unavailable\"")
			.doesNotContain("Exception")
			.doesNotContain("java.")
			.doesNotContain("0x");
		assertThat(this.executions.count(endpoint)).as("runs of the method").isEqualTo(1);
	}

	/**
	 * The answer to a record of a later format: 503 and {@code Retry-After}, a problem
	 * that says a newer version wrote it, and no run.
	 */
	void assertWrittenByANewerVersion(HttpResponse<String> response, String endpoint) {
		assertThat(response.statusCode()).isEqualTo(503);
		assertThat(response.headers().firstValue("Retry-After")).isPresent();
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(response.body()).contains("written by a newer version")
			.doesNotContain("Exception")
			.doesNotContain("0x");
		assertThat(this.executions.count(endpoint)).as("runs of the method").isEqualTo(1);
	}

	/**
	 * Exactly one line of the log names the record, a warning that says what is wrong
	 * with it; nothing was read past the end of an array.
	 */
	void assertOneWarning(CapturedOutput output, String clientKey, String damage) {
		String recordKey = recordKey(clientKey);
		assertThat(output.getAll().lines().filter((line) -> line.contains(recordKey))).singleElement()
			.satisfies((line) -> assertThat(line).contains("WARN").contains(damage));
		assertThat(output.getAll()).doesNotContain("IndexOutOfBoundsException");
	}

}
