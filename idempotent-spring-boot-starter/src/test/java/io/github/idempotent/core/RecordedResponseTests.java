package io.github.idempotent.core;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.github.idempotent.store.StoredResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The stored form of a recorded response: what is written is read back, byte for byte,
 * with the body deflated or not, and a damaged record names its damage.
 */
class RecordedResponseTests {

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
			assertThat(stored.bytes()[1]).isEqualTo((byte) (compression.isEnabled() ? 1 : 0));
			RecordedResponse read = RecordedResponse.read(stored, 1 << 20);
			assertThat(read).isEqualTo(RESPONSE);
			assertThat(read.headers().keySet()).containsExactly("Content-Type", "Location", "Link");
			assertThat(read.contentType()).isEqualTo("application/json");
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
	}

}
