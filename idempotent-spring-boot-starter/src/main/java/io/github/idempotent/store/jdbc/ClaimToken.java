package io.github.idempotent.store.jdbc;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

import io.github.idempotent.store.OwnerToken;

/**
 * The owner tokens of {@link JdbcIdempotencyStore}, which say when they claimed their key
 * and which attempt at it they are.
 * <p>
 * Why in the token rather than in columns of their own: the store issues its tokens and
 * keeps them in {@code owner_token VARCHAR(64)} anyway, and the take-over of an expired
 * row already reads the row's token (it updates on condition of it), so the attempt taken
 * over and its claim time come with that read at no cost, and tables created by earlier
 * versions need no migration. Every other statement compares the token as a whole, as
 * before. An attempt 1 is written exactly as {@link OwnerToken#generate(Instant)} writes
 * it ({@code 32 hex digits-claim second in hex}); a later attempt puts {@code .attempt}
 * in front of the dash ({@code 32 hex digits.2-claim second in hex}), at most 53
 * characters, which {@link OwnerToken#claimedAt} (and so an earlier version, rolled back
 * to) still reads the claim time of. Tokens of earlier versions read as attempt 1 with
 * the claim time they carry, if any.
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

	static @Nullable Instant claimedAt(String token) {
		return OwnerToken.claimedAt(token);
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

	/**
	 * The attempt that takes over the call that claimed with {@code token}.
	 */
	static int next(String token) {
		int attempt = attempt(token);
		return (attempt < Integer.MAX_VALUE) ? attempt + 1 : attempt;
	}

}
