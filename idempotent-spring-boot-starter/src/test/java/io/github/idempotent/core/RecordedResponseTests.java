package io.github.idempotent.core;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.github.idempotent.store.StoredResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The stored form of a recorded response: what is written is read back, byte for byte,
 * with the body deflated or not; a JSON {@code 200} or {@code 201} takes no more than its
 * typed value did; records of the general layout written before replay as they were; and
 * a damaged record names its damage.
 */
class RecordedResponseTests {

	/**
	 * What versions before the compact JSON layout stored for {@code 200},
	 * {@code Content-Type: application/json} and {@code {"id":"pay_1"}}: {@code H}, flags
	 * 0, the status, one header with one value, the body.
	 */
	private static final String GENERAL_200_JSON = "480000c8010c436f6e74656e742d5479706501106170706c69636174696f6e2f"
			+ "6a736f6e7b226964223a227061795f31227d";

	/**
	 * What they stored for {@code 201}, {@code application/json;charset=UTF-8} and
	 * {@link #items()}: {@code H}, flags 1 (deflated), the inflated length (409), then
	 * status, header and body deflated together.
	 */
	private static final String GENERAL_201_JSON_DEFLATED = "480199036338c9c8e39c9f57929a57a21b525990ca289758509093"
			+ "999c5892999fa79f559c9f679d9c9158549c5a621b1ae2a66b51ad9459929a5bac64155dad549c5daa64a514ec1daa6ba0a4a3"
			+ "54589a9857925952a9646558ab832c69884fd2089fa4313e49137c92a6f824cdf0499ae393b4c02769893710f007117a18c5d6"
			+ "0200";

	private static final RecordedResponse RESPONSE = new RecordedResponse(201, headers(),
			"{\"id\":\"pay-1\",\"note\":\"Grüße\"}".repeat(40).getBytes(StandardCharsets.UTF_8));

	private static Map<String, List<String>> headers() {
		Map<String, List<String>> headers = new LinkedHashMap<>();
		headers.put("Content-Type", List.of("application/json"));
		headers.put("Location", List.of("/payments/pay-1"));
		headers.put("Link", List.of("</a>; rel=a", "</b>; rel=b"));
		return headers;
	}

	@Test
	void aResponseIsReadBackAsWrittenWithAndWithoutDeflate() {
		for (ResultCompression compression : List.of(ResultCompression.none(), ResultCompression.deflate(256))) {
			StoredResult stored = RESPONSE.toStoredResult(compression);
			assertThat(stored.bytes()[0]).isEqualTo((byte) 'H');
			assertThat(stored.bytes()[1]).isEqualTo((byte) ((compression != ResultCompression.none()) ? 1 : 0));
			RecordedResponse read = RecordedResponse.read(stored, 1 << 20);
			assertThat(read).isEqualTo(RESPONSE);
			assertThat(read.headers().keySet()).containsExactly("Content-Type", "Location", "Link");
			assertThat(read.contentType()).isEqualTo("application/json");
		}
	}

	@Test
	void recordsOfTheGeneralLayoutWrittenBeforeReadBackAsTheyWere() {
		RecordedResponse plain = RecordedResponse.read(new StoredResult(HexFormat.of().parseHex(GENERAL_200_JSON)),
				1 << 20);
		assertThat(plain).isEqualTo(new RecordedResponse(200, Map.of("Content-Type", List.of("application/json")),
				"{\"id\":\"pay_1\"}".getBytes(StandardCharsets.UTF_8)));
		RecordedResponse deflated = RecordedResponse
			.read(new StoredResult(HexFormat.of().parseHex(GENERAL_201_JSON_DEFLATED)), 1 << 20);
		assertThat(deflated).isEqualTo(
				new RecordedResponse(201, Map.of("Content-Type", List.of("application/json;charset=UTF-8")), items()));
	}

	/**
	 * The common response of a {@code @RestController}: stored in no more bytes than the
	 * typed value ({@code V} and the JSON, or {@code Z} deflated) took before responses
	 * were recorded as written, and read back as it was sent.
	 */
	@ParameterizedTest
	@CsvSource({ "200, application/json", "201, application/json", "200, application/json;charset=UTF-8",
			"201, application/json;charset=UTF-8" })
	void aJsonResponseWithNoOtherHeaderTakesNoMoreThanItsTypedValue(int status, String contentType) {
		for (byte[] body : List.of("{\"id\":\"pay_1\"}".getBytes(StandardCharsets.UTF_8), items(),
				"{\"n\":\"Grüße\"}".repeat(150).getBytes(StandardCharsets.UTF_8), new byte[0])) {
			for (ResultCompression compression : List.of(ResultCompression.none(), ResultCompression.deflate(256),
					ResultCompression.deflate(0))) {
				RecordedResponse response = new RecordedResponse(status, Map.of("Content-Type", List.of(contentType)),
						body);
				StoredResult stored = response.toStoredResult(compression);
				byte[] value = new byte[body.length + 1];
				value[0] = 'V';
				System.arraycopy(body, 0, value, 1, body.length);
				StoredResult typed = compression.compress(new StoredResult(value));
				assertThat(stored.size()).as("%s bytes, %s", body.length, compression)
					.isLessThanOrEqualTo(typed.size());
				RecordedResponse read = RecordedResponse.read(stored, 1 << 20);
				assertThat(read).isEqualTo(response);
				assertThat(read.headers().keySet()).containsExactly("Content-Type");
				assertThat(read.contentType()).isEqualTo(contentType);
			}
		}
	}

	/**
	 * Anything else keeps the general layout, and reads back as it was sent: another
	 * status, another header, another type, another spelling of the JSON type.
	 */
	@ParameterizedTest
	@CsvSource(delimiter = '|', value = { "202 | Content-Type | application/json", "200 | Content-Type | text/plain",
			"200 | Content-Type | application/json; charset=utf-8", "201 | Content-Type | application/problem+json",
			"200 | content-type | application/json", "200 | Location | /payments/pay_1" })
	void otherResponsesKeepTheGeneralLayout(int status, String name, String value) {
		for (ResultCompression compression : List.of(ResultCompression.none(), ResultCompression.deflate(0))) {
			RecordedResponse response = new RecordedResponse(status, Map.of(name, List.of(value)), items());
			StoredResult stored = response.toStoredResult(compression);
			assertThat(stored.bytes()[0]).isEqualTo((byte) 'H');
			assertThat(RecordedResponse.read(stored, 1 << 20)).isEqualTo(response);
		}
		if (!name.equals("Content-Type")) {
			// And beside the JSON type.
			Map<String, List<String>> twoHeaders = new LinkedHashMap<>();
			twoHeaders.put("Content-Type", List.of("application/json"));
			twoHeaders.put(name, List.of(value));
			RecordedResponse beside = new RecordedResponse(200, twoHeaders, items());
			StoredResult stored = beside.toStoredResult(ResultCompression.none());
			assertThat(stored.bytes()[0]).isEqualTo((byte) 'H');
			assertThat(RecordedResponse.read(stored, 1 << 20)).isEqualTo(beside);
		}
	}

	@Test
	void anEmptyBodyAndNoHeadersAreARecordToo() {
		RecordedResponse noContent = new RecordedResponse(204, Map.of(), new byte[0]);
		assertThat(RecordedResponse.read(noContent.toStoredResult(ResultCompression.deflate(0)), 10))
			.isEqualTo(noContent);
	}

	@Test
	void otherOutcomesAreNoRecordedResponse() {
		assertThat(RecordedResponse.read(new StoredResult("V{}".getBytes(StandardCharsets.UTF_8)), 10)).isNull();
		assertThat(RecordedResponse.read(new StoredResult(new byte[0]), 10)).isNull();
	}

	@Test
	void aDamagedRecordNamesItsDamage() {
		byte[] stored = RESPONSE.toStoredResult(ResultCompression.none()).bytes();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RecordedResponse.read(new StoredResult(Arrays.copyOf(stored, 8)), 1 << 20))
			.withMessageContaining("truncated");
		byte[] flags = stored.clone();
		flags[1] = 4;
		assertThatIllegalArgumentException().isThrownBy(() -> RecordedResponse.read(new StoredResult(flags), 1 << 20))
			.withMessageContaining("flags");
		byte[] large = new RecordedResponse(200, Map.of(), new byte[100_000])
			.toStoredResult(ResultCompression.deflate(0))
			.bytes();
		assertThat(large.length).as("deflated").isLessThan(1000);
		assertThatIllegalArgumentException().isThrownBy(() -> RecordedResponse.read(new StoredResult(large), 1000))
			.withMessageContaining("above idempotent.max-result-size");
		byte[] json = new RecordedResponse(200, Map.of("Content-Type", List.of("application/json")), new byte[100_000])
			.toStoredResult(ResultCompression.deflate(0))
			.bytes();
		assertThat(json.length).as("deflated").isLessThan(1000);
		assertThatIllegalArgumentException().isThrownBy(() -> RecordedResponse.read(new StoredResult(json), 1000))
			.withMessageContaining("above idempotent.max-result-size");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RecordedResponse.read(new StoredResult(Arrays.copyOf(json, 20)), 1 << 20))
			.withMessageContaining("inflates to fewer bytes");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RecordedResponse.read(new StoredResult(Arrays.copyOf(json, 2)), 1 << 20))
			.withMessageContaining("truncated");
	}

	/**
	 * A JSON body of 361 bytes: above the 256-byte deflate threshold these tests set.
	 */
	private static byte[] items() {
		StringBuilder json = new StringBuilder("{\"items\":[");
		for (int i = 0; i < 12; i++) {
			json.append((i > 0) ? "," : "").append("{\"sku\":\"SKU-").append(i).append("\",\"quantity\":1}");
		}
		return json.append("]}").toString().getBytes(StandardCharsets.UTF_8);
	}

}
