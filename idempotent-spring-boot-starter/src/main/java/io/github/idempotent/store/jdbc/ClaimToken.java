package io.github.idempotent.store.jdbc;

import java.time.Instant;

import io.github.idempotent.store.OwnerToken;

/**
 * The owner tokens of {@link JdbcIdempotencyStore}, which carry their claim time and
 * attempt, so that the table needs no columns for them: attempt 1 as
 * {@link OwnerToken#generate(Instant)} writes it ({@code 32 hex digits-claim second in
 * hex}), a later attempt with {@code .attempt} before the dash, which
 * {@link OwnerToken#claimedAt} still reads.
 */
final class ClaimToken {

	private ClaimToken() {
	}

	static String issue(Instant claimedAt, int attempt) {
		String token = OwnerToken.generate(claimedAt);
		if (attempt == 1) {
			return token;
		}
		int dash = token.lastIndexOf('-');
		return token.substring(0, dash) + "." + attempt + token.substring(dash);
	}

	static int attempt(String token) {
		int dash = token.lastIndexOf('-');
		int dot = (dash > 0) ? token.lastIndexOf('.', dash) : -1;
		if (dot < 0 || dash - dot < 2 || dash - dot > 11) {
			return 1;
		}
		try {
			return Math.max(1, Integer.parseInt(token, dot + 1, dash, 10));
		}
		catch (NumberFormatException ex) {
			return 1;
		}
	}

	/** The attempt that takes over the call that claimed with {@code token}. */
	static int next(String token) {
		int attempt = attempt(token);
		return (attempt < Integer.MAX_VALUE) ? attempt + 1 : attempt;
	}

}
