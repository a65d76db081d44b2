package io.github.idempotent.web;

import java.util.List;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

import io.github.idempotent.core.IdempotencyKeyException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code Idempotency-Key} header as an attacker sends it, through
 * {@link HeaderIdempotencyKeyResolver}: any text (quotes, backslashes, control and
 * non-ASCII characters, one value or several) is either a key of printable ASCII or an
 * {@link IdempotencyKeyException} (400), and a key sent as an RFC 8941 string comes back
 * as it was.
 * <p>
 * Tries: {@code jqwik.tries.default} (src/test/resources/junit-platform.properties);
 * {@code -Djqwik.tries.default=200000} for a long run.
 */
class IdempotencyKeyHeaderPropertyTests {

	private final HeaderIdempotencyKeyResolver resolver = new HeaderIdempotencyKeyResolver("Idempotency-Key");

	@Property
	void anyHeaderIsAPrintableKeyOrABadRequest(@ForAll("headerValues") List<String> values) {
		MockHttpServletRequest request = new MockHttpServletRequest();
		values.forEach((value) -> request.addHeader("Idempotency-Key", value));
		RequestContextHolder.setRequestAttributes(new ServletRequestAttributes(request));
		try {
			String key = this.resolver.resolveKey();
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
		finally {
			RequestContextHolder.resetRequestAttributes();
		}
	}

	@Property
	void aQuotedKeyComesBackAsItWasSent(@ForAll("printableKeys") String key) {
		String quoted = "\"" + key.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
		assertThat(IdempotencyKeyHeader.parse("Idempotency-Key", quoted)).isEqualTo(key);
	}

	@Provide
	Arbitrary<List<String>> headerValues() {
		Arbitrary<String> crafted = Arbitraries.strings()
			.withChars("\"\\ \tabc-0\u0000\u001f\u007f\u00e9\u2028\ud83d\ude00")
			.ofMaxLength(24);
		Arbitrary<String> quoted = crafted.map((text) -> "\"" + text + "\"");
		Arbitrary<String> any = Arbitraries.strings().ofMaxLength(64);
		return Arbitraries.oneOf(crafted, quoted, any).list().ofMaxSize(2);
	}

	@Provide
	Arbitrary<String> printableKeys() {
		return Arbitraries.strings().withCharRange(' ', '~').ofMinLength(1).ofMaxLength(64);
	}

}
