package io.github.idempotent.web;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.util.LinkedCaseInsensitiveMap;

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
			"x-refresh-token", "x-id-token", "x-csrf-token", "x-xsrf-token", IdempotencyResponseHeaders.REPLAYED);

	// Header names are ASCII tokens: a case-insensitive order compares them as lower
	// case.
	private final Set<String> excluded = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);

	private final Set<String> replayedOnly = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);

	ReplayedHeaders(Collection<String> excludedHeaders, Collection<String> replayedOnlyHeaders) {
		this.excluded.addAll(NOT_REPLAYED);
		this.excluded.addAll(excludedHeaders);
		this.replayedOnly.addAll(replayedOnlyHeaders);
	}

	boolean isReplayed(String name) {
		return !this.excluded.contains(name) && !name.regionMatches(true, 0, "access-control-", 0, 15)
				&& (this.replayedOnly.isEmpty() || this.replayedOnly.contains(name));
	}

	/**
	 * The headers a recorded response keeps, on Spring MVC and WebFlux: the body's type
	 * first, then those a replay carries that the handler set or changed.
	 * @param before the headers when the response was held back
	 */
	Map<String, List<String>> recorded(@Nullable String contentType, Map<String, List<String>> before,
			Map<String, List<String>> headers) {
		Map<String, List<String>> recorded = new LinkedHashMap<>();
		if (contentType != null) {
			recorded.put(HttpHeaders.CONTENT_TYPE, List.of(contentType));
		}
		headers.forEach((name, values) -> {
			if (!name.equalsIgnoreCase(HttpHeaders.CONTENT_TYPE) && isReplayed(name) && !values.isEmpty()
					&& !values.contains(null) && !values.equals(before.get(name))) {
				recorded.put(name, values);
			}
		});
		return recorded;
	}

	static Map<String, List<String>> snapshot(Collection<String> names,
			Function<String, ? extends @Nullable Collection<String>> values) {
		Map<String, List<String>> snapshot = new LinkedCaseInsensitiveMap<>();
		names.forEach((name) -> snapshot.put(name, new ArrayList<>(Objects.requireNonNull(values.apply(name)))));
		return snapshot;
	}

}
