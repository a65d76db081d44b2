package io.github.idempotent.web;

import java.util.List;

import org.springframework.http.HttpHeaders;

import io.github.idempotent.core.RecordedResponse;

/**
 * Runs the {@link IdempotentReplayCustomizer}s on a replay.
 */
final class ReplayCustomizers {

	private final List<IdempotentReplayCustomizer> customizers;

	final ReplayedHeaders replayedHeaders;

	ReplayCustomizers(List<IdempotentReplayCustomizer> customizers, ReplayedHeaders replayedHeaders) {
		this.customizers = List.copyOf(customizers);
		this.replayedHeaders = replayedHeaders;
	}

	// The headers the customizers changed, each to replace that header on the response.
	HttpHeaders recorded(String operation, String key, RecordedResponse response) {
		if (this.customizers.isEmpty()) {
			return HttpHeaders.EMPTY;
		}
		HttpHeaders stored = new HttpHeaders();
		response.headers().forEach(stored::put);
		ReplayedResponse replay = new ReplayedResponse(operation, key, response.status(), stored, response.body(),
				this.replayedHeaders);
		this.customizers.forEach(replay::customize);
		return replay.changes();
	}

}
