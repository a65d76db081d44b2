package io.github.idempotent.web;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * The headers a recorded response keeps, on Spring MVC and WebFlux: the body's type
 * first, then those a replay carries.
 */
final class RecordedHeaders {

	private final ReplayedHeaders replayedHeaders;

	private final Map<String, List<String>> headers = new LinkedHashMap<>();

	RecordedHeaders(ReplayedHeaders replayedHeaders, @Nullable String contentType) {
		this.replayedHeaders = replayedHeaders;
		if (contentType != null) {
			this.headers.put(HttpHeaders.CONTENT_TYPE, List.of(contentType));
		}
	}

	void add(String name, @Nullable Collection<String> values) {
		if (ReplayedHeaders.isContentHeader(name) || !this.replayedHeaders.isReplayed(name)) {
			return;
		}
		if (values != null && !values.isEmpty()) {
			this.headers.put(name, new ArrayList<>(values));
		}
	}

	Map<String, List<String>> toMap() {
		return this.headers;
	}

}
