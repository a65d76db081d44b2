package io.github.idempotent.web;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * The headers a recorded response keeps, for Spring MVC and WebFlux alike: the body's
 * type first, then each header the handling set that a replay carries
 * ({@link ReplayedHeaders}), with the values it has when the response is stored. The
 * body's length is the container's to set on each response.
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

	/**
	 * Keeps a header set while the response was recorded, unless a replay does not carry
	 * it or it has no value.
	 */
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
