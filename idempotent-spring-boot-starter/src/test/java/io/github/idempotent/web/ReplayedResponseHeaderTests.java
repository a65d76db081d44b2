package io.github.idempotent.web;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Which headers a replay customizer may set: never one the starter owns or never replays,
 * in any case or with stray whitespace, nor one that changes how the stored body is read.
 */
class ReplayedResponseHeaderTests {

	private ReplayedResponse replay() {
		return new ReplayedResponse("op", "k", 201, new HttpHeaders(), new byte[] { '{', '}' },
				new ReplayedHeaders(List.of("Idempotency-Key", IdempotencyResponseHeaders.REPLAYED), List.of()));
	}

	@Test
	void caseVariantsOfForbiddenHeadersAreRefused() {
		for (String name : List.of("set-cookie", "SET-COOKIE", "idempotent-replayed", "IDEMPOTENCY-KEY", "content-type",
				"Access-Control-Allow-Origin", "authorization")) {
			assertThatIllegalArgumentException().as(name).isThrownBy(() -> replay().setHeader(name, "x"));
		}
	}

	@Test
	void aForbiddenHeaderWithSurroundingWhitespaceIsRefused() {
		assertThatIllegalArgumentException().as("'Set-Cookie ' (trailing space) reaches the response")
			.isThrownBy(() -> replay().addHeader("Set-Cookie ", "session=stolen"));
	}

	@Test
	void aHeaderThatChangesHowTheStoredBodyIsReadIsRefused() {
		assertThatIllegalArgumentException()
			.as("Content-Encoding on a replay changes how the client decodes the stored body bytes")
			.isThrownBy(() -> replay().setHeader("Content-Encoding", "gzip"));
	}

	@Test
	void aValueWithALineBreakIsRefused() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> replay().setHeader("X-Region", "eu\r\nSet-Cookie: session=stolen"));
	}

}
