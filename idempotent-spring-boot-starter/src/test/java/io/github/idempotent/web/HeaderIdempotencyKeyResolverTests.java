package io.github.idempotent.web;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

import io.github.idempotent.core.IdempotencyKeyException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class HeaderIdempotencyKeyResolverTests {

	private final HeaderIdempotencyKeyResolver resolver = new HeaderIdempotencyKeyResolver("Idempotency-Key");

	@AfterEach
	void clear() {
		RequestContextHolder.resetRequestAttributes();
	}

	@Test
	void bareToken() {
		assertThat(resolve("8e03978e-40d5-43e8-bc93-6894a57f9324")).isEqualTo("8e03978e-40d5-43e8-bc93-6894a57f9324");
	}

	@Test
	void quotedStringIsUnquotedAndUnescaped() {
		assertThat(resolve("\"abc\"")).isEqualTo("abc");
		assertThat(resolve("\"a \\\"quoted\\\" \\\\ key\"")).isEqualTo("a \"quoted\" \\ key");
	}

	@Test
	void surroundingWhitespaceIsIgnored() {
		assertThat(resolve("  abc  ")).isEqualTo("abc");
	}

	@Test
	void absentHeaderOrNoRequestMeansNoKey() {
		RequestContextHolder.setRequestAttributes(new ServletRequestAttributes(new MockHttpServletRequest()));
		assertThat(this.resolver.resolveKey()).isNull();
		RequestContextHolder.resetRequestAttributes();
		assertThat(this.resolver.resolveKey()).isNull();
	}

	@Test
	void emptyValuesAreRejected() {
		assertThatExceptionOfType(IdempotencyKeyException.class).isThrownBy(() -> resolve(""))
			.withMessageContaining("empty");
		assertThatExceptionOfType(IdempotencyKeyException.class).isThrownBy(() -> resolve("\"\""))
			.withMessageContaining("empty");
	}

	@Test
	void aQuotedKeyIsUnquotedSoItsLengthIsTheKeys() {
		// The length limit is applied by the interceptor to the key resolved here.
		assertThat(resolve("\"" + "k".repeat(255) + "\"")).hasSize(255);
	}

	@Test
	void nonAsciiAndControlCharactersAreRejected() {
		assertThatExceptionOfType(IdempotencyKeyException.class).isThrownBy(() -> resolve("clé"))
			.withMessageContaining("printable ASCII");
		assertThatExceptionOfType(IdempotencyKeyException.class).isThrownBy(() -> resolve("a\tb"))
			.withMessageContaining("printable ASCII");
	}

	@Test
	void malformedQuotedStringsAreRejected() {
		assertThatExceptionOfType(IdempotencyKeyException.class).isThrownBy(() -> resolve("\"abc"))
			.withMessageContaining("not closed");
		assertThatExceptionOfType(IdempotencyKeyException.class).isThrownBy(() -> resolve("\"abc\"def"))
			.withMessageContaining("follows the closing quote");
		assertThatExceptionOfType(IdempotencyKeyException.class).isThrownBy(() -> resolve("\"a\\nb\""))
			.withMessageContaining("backslash");
	}

	@Test
	void twoHeadersAreRejected() {
		MockHttpServletRequest request = new MockHttpServletRequest();
		request.addHeader("Idempotency-Key", "a");
		request.addHeader("Idempotency-Key", "b");
		RequestContextHolder.setRequestAttributes(new ServletRequestAttributes(request));
		assertThatExceptionOfType(IdempotencyKeyException.class).isThrownBy(this.resolver::resolveKey)
			.withMessageContaining("More than one Idempotency-Key header");
	}

	@Test
	void headerNameIsConfigurable() {
		HeaderIdempotencyKeyResolver custom = new HeaderIdempotencyKeyResolver("X-Request-Key");
		MockHttpServletRequest request = new MockHttpServletRequest();
		request.addHeader("X-Request-Key", "abc");
		RequestContextHolder.setRequestAttributes(new ServletRequestAttributes(request));
		assertThat(custom.resolveKey()).isEqualTo("abc");
	}

	private String resolve(String value) {
		MockHttpServletRequest request = new MockHttpServletRequest();
		request.addHeader("Idempotency-Key", value);
		RequestContextHolder.setRequestAttributes(new ServletRequestAttributes(request));
		return this.resolver.resolveKey();
	}

}
