package io.github.idempotent.web;

import java.util.List;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.http.HttpHeaders;

import io.github.idempotent.core.RecordedResponse;

/**
 * Runs the {@link IdempotentReplayCustomizer}s on a replay; one that throws is logged and
 * its changes dropped.
 */
final class ReplayCustomizers {

	private static final Log logger = LogFactory.getLog(IdempotentReplayCustomizer.class);

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
		for (IdempotentReplayCustomizer customizer : this.customizers) {
			try {
				replay.customize(customizer);
			}
			catch (RuntimeException | LinkageError ex) {
				logger.warn("Replay customizer " + customizer.getClass().getName() + " failed on a replay of "
						+ operation + " for key '" + key + "'; the replay is sent without the headers it set", ex);
			}
		}
		return replay.changes();
	}

}
