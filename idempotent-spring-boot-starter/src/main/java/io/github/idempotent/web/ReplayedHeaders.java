package io.github.idempotent.web;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
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
			"x-refresh-token", "x-id-token", "x-csrf-token", "x-xsrf-token",
			IdempotencyResponseHeaders.REPLAYED.toLowerCase(Locale.ROOT));

	private final Set<String> excluded;

	private final Set<String> replayedOnly;

	ReplayedHeaders(Collection<String> excludedHeaders, Collection<String> replayedOnlyHeaders) {
		this.excluded = lowerCase(excludedHeaders, NOT_REPLAYED);
		this.replayedOnly = lowerCase(replayedOnlyHeaders, Set.of());
	}

	private static Set<String> lowerCase(Collection<String> names, Set<String> more) {
		Set<String> lower = new HashSet<>(more);
		names.forEach((name) -> lower.add(name.toLowerCase(Locale.ROOT)));
		return Set.copyOf(lower);
	}

	boolean isReplayed(String name) {
		String lower = name.toLowerCase(Locale.ROOT);
		return !this.excluded.contains(lower) && !lower.startsWith("access-control-")
				&& (this.replayedOnly.isEmpty() || this.replayedOnly.contains(lower));
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
