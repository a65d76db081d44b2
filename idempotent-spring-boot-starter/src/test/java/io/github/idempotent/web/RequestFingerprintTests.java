package io.github.idempotent.web;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The canonical form of a JSON body is part of every stored fingerprint: a release that
 * wrote it differently would answer 422 to retries of requests stored before it.
 */
class RequestFingerprintTests {

	@Test
	void stringsAreEscapedAsRfc8785Does() {
		assertThat(canonical(
				"{\"s\":\"q\\\" b\\\\ \\b\\f\\n\\r\\t \\u0001\\u001f \\u007f / \\u00e9 \\u2028 \\ud83d\\ude00\"}"))
			.isEqualTo("{\"s\":\"q\\\" b\\\\ \\b\\f\\n\\r\\t \\u0001\\u001f \u007f / \u00e9 \u2028 \ud83d\ude00\"}");
	}

	@Test
	void membersAreSortedStablyAndNumbersWrittenByValue() {
		assertThat(canonical("{ \"b\": [1.50, -0, 1e1, 1E-7, 0.000001, 1e21, 123456789012345678901, true, null],"
				+ " \"a\": 2, \"a\": {\"y\": false, \"x\": []} }"))
			.isEqualTo("{\"a\":2,\"a\":{\"x\":[],\"y\":false},"
					+ "\"b\":[1.5,0,10,1e-7,0.000001,1e+21,123456789012345678901,true,null]}");
	}

	@Test
	void aBodyThatIsNotOneJsonValueHasNoCanonicalForm() {
		assertThat(RequestFingerprint.canonicalJson(new byte[0])).isNull();
		assertThat(RequestFingerprint.canonicalJson("{\"a\":".getBytes(StandardCharsets.UTF_8))).isNull();
		assertThat(RequestFingerprint.canonicalJson("{} {}".getBytes(StandardCharsets.UTF_8))).isNull();
	}

	private static String canonical(String json) {
		byte[] canonical = RequestFingerprint.canonicalJson(json.getBytes(StandardCharsets.UTF_8));
		assertThat(canonical).isNotNull();
		return new String(canonical, StandardCharsets.UTF_8);
	}

}
