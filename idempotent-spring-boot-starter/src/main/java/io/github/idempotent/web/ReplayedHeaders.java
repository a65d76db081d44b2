package io.github.idempotent.web;

import java.util.Collection;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;

import org.springframework.http.HttpHeaders;

/**
 * Which response headers a replay carries: all that the first call's response set, except
 * hop-by-hop headers, headers the server computes for each response, CORS headers
 * (computed for each request's origin) and credentials. A replay goes to whoever sends
 * the key again, and must never hand them the first caller's session cookie or token.
 */
final class ReplayedHeaders {

	/**
	 * Hop-by-hop headers (RFC 9110 section 7.6.1), framing headers the container
	 * recomputes, and credentials.
	 */
	private static final Set<String> NOT_REPLAYED = Set.of("connection", "keep-alive", "proxy-authenticate",
			"proxy-authorization", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
			"content-length", "date", "set-cookie", "set-cookie2", "authorization", "www-authenticate",
			"authentication-info", "proxy-authentication-info",
			IdempotencyResponseHeaders.REPLAYED.toLowerCase(Locale.ROOT));

	private final Set<String> excluded;

	/**
	 * @param excludedHeaders further headers never stored, case-insensitive (the
	 * application's own, the key and replay markers that each response sets anew)
	 */
	ReplayedHeaders(Collection<String> excludedHeaders) {
		Set<String> excluded = new HashSet<>(NOT_REPLAYED);
		excludedHeaders.forEach((name) -> excluded.add(name.toLowerCase(Locale.ROOT)));
		this.excluded = Set.copyOf(excluded);
	}

	boolean isReplayed(String name) {
		String lower = name.toLowerCase(Locale.ROOT);
		return !this.excluded.contains(lower) && !lower.startsWith("access-control-");
	}

	/**
	 * Whether a header is set by the container for each response rather than stored: the
	 * body's length, and its type, which is recorded apart.
	 */
	static boolean isContentHeader(String name) {
		return name.equalsIgnoreCase(HttpHeaders.CONTENT_TYPE) || name.equalsIgnoreCase(HttpHeaders.CONTENT_LENGTH);
	}

}
