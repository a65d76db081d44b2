package io.github.idempotent.web;

import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import org.springframework.http.HttpHeaders;

/**
 * Which response headers a replay carries: never hop-by-hop, per-response, CORS or
 * credential headers, since a replay goes to whoever sends the key again.
 */
final class ReplayedHeaders {

	// Hop-by-hop (RFC 9110 7.6.1), framing, and credentials, standard or common custom.
	private static final Set<String> NOT_REPLAYED = Set.of("connection", "keep-alive", "proxy-authenticate",
			"proxy-authorization", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
			"content-length", "date", "set-cookie", "set-cookie2", "authorization", "www-authenticate",
			"authentication-info", "proxy-authentication-info", "x-auth-token", "x-api-key", "x-access-token",
			"x-refresh-token", "x-id-token", "x-csrf-token", "x-xsrf-token",
			IdempotencyResponseHeaders.REPLAYED.toLowerCase(Locale.ROOT));

	private final Set<String> excluded;

	private final Set<String> replayedOnly;

	ReplayedHeaders(Collection<String> excludedHeaders) {
		this(excludedHeaders, List.of());
	}

	ReplayedHeaders(Collection<String> excludedHeaders, Collection<String> replayedOnlyHeaders) {
		Set<String> excluded = new HashSet<>(NOT_REPLAYED);
		excludedHeaders.forEach((name) -> excluded.add(name.toLowerCase(Locale.ROOT)));
		this.excluded = Set.copyOf(excluded);
		Set<String> replayedOnly = new HashSet<>();
		replayedOnlyHeaders.forEach((name) -> replayedOnly.add(name.toLowerCase(Locale.ROOT)));
		this.replayedOnly = Set.copyOf(replayedOnly);
	}

	boolean isReplayed(String name) {
		String lower = name.toLowerCase(Locale.ROOT);
		return !this.excluded.contains(lower) && !lower.startsWith("access-control-")
				&& (this.replayedOnly.isEmpty() || this.replayedOnly.contains(lower));
	}

	// The type is recorded apart; the length is the container's.
	static boolean isContentHeader(String name) {
		return name.equalsIgnoreCase(HttpHeaders.CONTENT_TYPE) || name.equalsIgnoreCase(HttpHeaders.CONTENT_LENGTH);
	}

}
