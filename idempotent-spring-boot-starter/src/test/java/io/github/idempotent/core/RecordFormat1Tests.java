package io.github.idempotent.core;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.ResolvableType;

import io.github.idempotent.store.StoredResult;
import io.github.idempotent.testsupport.GoldenRecords;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Record format 1, frozen with the first release: the golden outcome of every kind (as
 * every store keeps it) replays, in this build and every later one, to exactly what it
 * recorded; and this build writes the uncompressed ones byte for byte. A compressed
 * golden record is only read: deflate's output may differ from one zlib to another, its
 * inflation may not. docs/stores.md, "Record format 1", says what each byte means.
 */
class RecordFormat1Tests {

	private static final long MAX_RESULT_SIZE = 1024 * 1024;

	private static final ResultCompression COMPRESSION = ResultCompression.deflate(256);

	private static final IdempotencyPolicy POLICY = new IdempotencyPolicy("golden", Duration.ofHours(24),
			Duration.ofSeconds(30), Duration.ZERO, Duration.ofSeconds(1), List.of(IllegalStateException.class),
			new JacksonResultCodec(new JsonMapper()).bind(ResolvableType.forClass(Payment.class)));

	private static final Payment SMALL = new Payment("pay-1", "ORD-1", 1250, List.of("Grüße"));

	private static final Payment LARGE = new Payment("pay-2", "ORD-2", 990,
			Collections.nCopies(20, "line item of order ORD-2"));

	private static final RecordedResponse RESPONSE = new RecordedResponse(201, headers(), utf8("{\"id\":\"pay-1\"}"));

	private static final byte[] LARGE_BODY = utf8("{\"id\":\"pay-1\",\"note\":\"Grüße\"}".repeat(20));

	private static final RecordedResponse JSON = new RecordedResponse(201,
			Map.of("Content-Type", List.of("application/json;charset=UTF-8")), utf8("{\"id\":\"pay-1\"}"));

	@Test
	void aValueReplays() throws Throwable {
		assertThat(replay("value")).isEqualTo(SMALL);
		assertThat(StoredOutcome.value(POLICY, "k", SMALL, MAX_RESULT_SIZE, COMPRESSION).bytes())
			.isEqualTo(GoldenRecords.read("value"));
	}

	@Test
	void aCompressedValueReplays() throws Throwable {
		assertThat(replay("value-compressed")).isEqualTo(LARGE);
	}

	@Test
	void aRecordedResponseReplays() {
		assertThat(response("response")).isEqualTo(RESPONSE);
		assertThat(RESPONSE.toStoredResult(COMPRESSION).bytes()).isEqualTo(GoldenRecords.read("response"));
	}

	@Test
	void aCompressedRecordedResponseReplays() {
		assertThat(response("response-compressed")).isEqualTo(new RecordedResponse(201, headers(), LARGE_BODY));
	}

	@Test
	void aJsonResponseReplays() {
		assertThat(response("json-response")).isEqualTo(JSON);
		assertThat(JSON.toStoredResult(COMPRESSION).bytes()).isEqualTo(GoldenRecords.read("json-response"));
	}

	@Test
	void aCompressedJsonResponseReplays() {
		assertThat(response("json-response-compressed"))
			.isEqualTo(new RecordedResponse(200, Map.of("Content-Type", List.of("application/json")), LARGE_BODY));
	}

	@Test
	void aCachedErrorReplaysAsTheSameException() {
		IllegalStateException error = new IllegalStateException("Card declined for order ORD-1");
		assertThatIllegalStateException().isThrownBy(() -> replay("error")).withMessage(error.getMessage());
		assertThat(StoredOutcome.error(error).bytes()).isEqualTo(GoldenRecords.read("error"));
	}

	@Test
	void aResultNotStoredIsResultUnavailableNeverARun() {
		assertThatExceptionOfType(IdempotencyResultException.class).isThrownBy(() -> replay("not-stored"))
			.satisfies((ex) -> assertThat(ex.getDetail()).contains("processed, but its result was not stored"))
			.withMessageContaining("store full");
		assertThat(StoredOutcome.notStored("store full").bytes()).isEqualTo(GoldenRecords.read("not-stored"));
	}

	private static Object replay(String golden) throws Throwable {
		StoredResult stored = new StoredResult(GoldenRecords.read(golden));
		assertThat(StoredOutcome.recordedResponse(stored, MAX_RESULT_SIZE)).isNull();
		return StoredOutcome.replay(POLICY, "k", stored, MAX_RESULT_SIZE);
	}

	private static RecordedResponse response(String golden) {
		return StoredOutcome.recordedResponse(new StoredResult(GoldenRecords.read(golden)), MAX_RESULT_SIZE);
	}

	private static Map<String, List<String>> headers() {
		Map<String, List<String>> headers = new LinkedHashMap<>();
		headers.put("Content-Type", List.of("application/json"));
		headers.put("Location", List.of("/payments/pay-1"));
		headers.put("Link", List.of("</a>; rel=a", "</b>; rel=b"));
		return headers;
	}

	private static byte[] utf8(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	public record Payment(String id, String orderNo, long amount, List<String> notes) {
	}

}
