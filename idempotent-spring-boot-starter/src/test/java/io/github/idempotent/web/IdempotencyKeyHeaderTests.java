package io.github.idempotent.web;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.idempotent.core.IdempotencyKeyException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class IdempotencyKeyHeaderTests {

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
	void anAbsentHeaderIsNoKey() {
		assertThat(IdempotencyKeyHeader.parse("Idempotency-Key", List.of())).isNull();
	}

	@Test
	void aListOfKeysOnOneLineIsRejected() {
		assertThatExceptionOfType(IdempotencyKeyException.class).isThrownBy(() -> resolve("k1, k2"))
			.withMessageContaining("list of keys");
		assertThat(resolve("\"a,b\"")).isEqualTo("a,b");
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
		assertThatExceptionOfType(IdempotencyKeyException.class)
			.isThrownBy(() -> IdempotencyKeyHeader.parse("Idempotency-Key", List.of("a", "b")))
			.withMessageContaining("More than one Idempotency-Key header");
	}

	@Test
	void theMessageNamesTheConfiguredHeader() {
		assertThatExceptionOfType(IdempotencyKeyException.class)
			.isThrownBy(() -> IdempotencyKeyHeader.parse("X-Request-Key", List.of("")))
			.withMessageContaining("X-Request-Key");
	}

	private String resolve(String value) {
		return IdempotencyKeyHeader.parse("Idempotency-Key", List.of(value));
	}

}
