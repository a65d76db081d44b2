package io.github.idempotent.web;

import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import org.springframework.http.HttpHeaders;

/**
 * Which response headers a replay carries: all that the first call's response set, except
 * hop-by-hop headers, headers the server computes for each response, CORS headers
 * (computed for each request's origin) and credentials. A replay goes to whoever sends
 * the key again, and must never hand them the first caller's session cookie or token.
 * With an allow-list, only the headers it names, still less those.
 */
final class ReplayedHeaders {

	/**
	 * Hop-by-hop headers (RFC 9110 section 7.6.1), framing headers the container
	 * recomputes, and credentials: the standard ones, and the custom ones common enough
	 * that a handler may set them on a {@code ResponseEntity} (a session or API token, a
	 * CSRF token bound to the first caller's session).
	 */
	private static final Set<String> NOT_REPLAYED = Set.of("connection", "keep-alive", "proxy-authenticate",
			"proxy-authorization", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
			"content-length", "date", "set-cookie", "set-cookie2", "authorization", "www-authenticate",
			"authentication-info", "proxy-authentication-info", "x-auth-token", "x-api-key", "x-access-token",
			"x-refresh-token", "x-id-token", "x-csrf-token", "x-xsrf-token",
			IdempotencyResponseHeaders.REPLAYED.toLowerCase(Locale.ROOT));

	private final Set<String> excluded;

	private final Set<String> replayedOnly;

	/**
	 * @param excludedHeaders further headers never stored, case-insensitive (the
	 * application's own, the key and replay markers that each response sets anew)
	 */
	ReplayedHeaders(Collection<String> excludedHeaders) {
		this(excludedHeaders, List.of());
	}

	/**
	 * @param excludedHeaders further headers never stored, case-insensitive (the
	 * application's own, the key and replay markers that each response sets anew)
	 * @param replayedOnlyHeaders when not empty, the only headers stored,
	 * case-insensitive, still less the excluded ones and credentials
	 */
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

	/**
	 * Whether a header is set by the container for each response rather than stored: the
	 * body's length, and its type, which is recorded apart.
	 */
	static boolean isContentHeader(String name) {
		return name.equalsIgnoreCase(HttpHeaders.CONTENT_TYPE) || name.equalsIgnoreCase(HttpHeaders.CONTENT_LENGTH);
	}

}
