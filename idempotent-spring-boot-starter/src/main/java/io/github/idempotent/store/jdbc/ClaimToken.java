package io.github.idempotent.store.jdbc;

import java.time.Instant;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.idempotent.store.OwnerToken;

/**
 * Owner tokens that carry their claim time and attempt, so that the table needs no
 * columns for them: {@link OwnerToken#generate(Instant)}'s for attempt 1, a later attempt
 * with {@code .attempt} before the dash, which {@link OwnerToken#claimedAt} still reads.
 */
final class ClaimToken {

	/** The attempt between the last dot and the last dash. */
	private static final Pattern ATTEMPT = Pattern.compile("\\.([0-9]{1,10})-[^-]*$");

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
		Matcher matcher = ATTEMPT.matcher(token);
		return matcher.find() ? (int) Math.max(1, Math.min(Integer.MAX_VALUE, Long.parseLong(matcher.group(1)))) : 1;
	}

	/** The attempt that takes over the call that claimed with {@code token}. */
	static int next(String token) {
		return (int) Math.min(Integer.MAX_VALUE, attempt(token) + 1L);
	}

}
