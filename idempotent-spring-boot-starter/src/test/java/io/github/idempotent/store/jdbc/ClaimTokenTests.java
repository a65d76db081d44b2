package io.github.idempotent.store.jdbc;

import java.time.Instant;

import org.junit.jupiter.api.Test;

import io.github.idempotent.store.OwnerToken;

import static org.assertj.core.api.Assertions.assertThat;

class ClaimTokenTests {

	private static final Instant CLAIMED = Instant.parse("2026-12-03T19:42:11Z");

	@Test
	void aFirstAttemptIsAnOwnerTokenWithItsClaimTime() {
		String token = ClaimToken.issue(CLAIMED, 1);
		assertThat(token).matches("[0-9a-f]{32}-[0-9a-f]+");
		assertThat(ClaimToken.attempt(token)).isOne();
		assertThat(OwnerToken.claimedAt(token)).isEqualTo(CLAIMED);
	}

	@Test
	void aLaterAttemptCarriesItsNumberWhereEarlierVersionsStillReadTheClaimTime() {
		String token = ClaimToken.issue(CLAIMED, 12);
		assertThat(token).matches("[0-9a-f]{32}\\.12-[0-9a-f]+");
		assertThat(ClaimToken.attempt(token)).isEqualTo(12);
		assertThat(ClaimToken.next(token)).isEqualTo(13);
		assertThat(OwnerToken.claimedAt(token)).isEqualTo(CLAIMED);
		assertThat(ClaimToken.issue(Instant.now(), Integer.MAX_VALUE)).hasSizeLessThanOrEqualTo(64);
		assertThat(ClaimToken.next(ClaimToken.issue(CLAIMED, Integer.MAX_VALUE))).isEqualTo(Integer.MAX_VALUE);
	}

	@Test
	void tokensOfEarlierVersionsAreAFirstAttempt() {
		assertThat(ClaimToken.attempt("0123456789abcdef0123456789abcdef")).isOne();
		assertThat(OwnerToken.claimedAt("0123456789abcdef0123456789abcdef")).isNull();
		assertThat(ClaimToken.attempt("0123456789abcdef0123456789abcdef-6a0b1c2d")).isOne();
		assertThat(ClaimToken.attempt("0123456789abcdef.x-6a0b1c2d")).isOne();
		assertThat(ClaimToken.attempt("0123456789abcdef.-6a0b1c2d")).isOne();
		assertThat(ClaimToken.attempt("0123456789abcdef.0-6a0b1c2d")).isOne();
	}

}
