package io.github.idempotent.web;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.idempotent.core.IdempotencyKeyException;
import io.github.idempotent.testsupport.Draw;
import io.github.idempotent.testsupport.Tries;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code Idempotency-Key} header as an attacker sends it, through
 * {@link IdempotencyKeyHeader}: any text (quotes, backslashes, control and non-ASCII
 * characters, one value or several) is either a key of printable ASCII or an
 * {@link IdempotencyKeyException} (400), and a key sent as an RFC 8941 string comes back
 * as it was. Seeds, tries and replays: {@link Tries}.
 */
class IdempotencyKeyHeaderPropertyTests {

	private static final String CRAFTED = "\"\\ \tabc-0\u0000\u001f\u007f\u00e9\u2028\ud83d\ude00";

	@Test
	void anyHeaderIsAPrintableKeyOrABadRequest() {
		Tries.check(IdempotencyKeyHeaderPropertyTests::headerValues, this::isAPrintableKeyOrABadRequest);
	}

	@Test
	void aQuotedKeyComesBackAsItWasSent() {
		Tries.check((draw) -> draw.string(Draw.range(' ', '~'), 1, 64), (key) -> {
			String quoted = "\"" + key.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
			assertThat(IdempotencyKeyHeader.parse("Idempotency-Key", quoted)).isEqualTo(key);
		});
	}

	private void isAPrintableKeyOrABadRequest(List<String> values) {
		try {
			String key = IdempotencyKeyHeader.parse("Idempotency-Key", values);
			if (values.isEmpty()) {
				assertThat(key).isNull();
			}
			else {
				assertThat(key).isNotEmpty().matches("[\\x20-\\x7E]+");
				assertThat(values).hasSize(1);
			}
		}
		catch (IdempotencyKeyException ex) {
			assertThat(ex.getMessage()).contains("Idempotency-Key").doesNotContain("Exception");
		}
	}

	private static List<String> headerValues(Draw draw) {
		return draw.list(0, 2, () -> draw.oneOf(() -> draw.string(CRAFTED, 0, 24),
				() -> "\"" + draw.string(CRAFTED, 0, 24) + "\"", () -> draw.string(0, 64)));
	}

}
