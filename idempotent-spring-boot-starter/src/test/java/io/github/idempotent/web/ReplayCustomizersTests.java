package io.github.idempotent.web;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;

import io.github.idempotent.core.RecordedResponse;
import io.github.idempotent.testsupport.BoundProperties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class ReplayCustomizersTests {

	private final ReplayedHeaders replayedHeaders = new ReplayedHeaders(
			List.of("Idempotency-Key", "Idempotent-Replayed", "X-Session-Token"), List.of());

	private final RecordedResponse recorded = new RecordedResponse(201,
			Map.of("Content-Type", List.of("application/json"), "Location", List.of("/payments/1")),
			"{\"run\":1}".getBytes());

	@Test
	void headersTheLibraryOwnsOrNeverReplaysAreRefused() {
		ReplayedResponse replay = new ReplayedResponse("op", "k", 200, HttpHeaders.EMPTY, new byte[0],
				this.replayedHeaders);
		for (String name : List.of("Idempotent-Replayed", "idempotency-key", "Set-Cookie", "Authorization",
				"Content-Length", "Content-Type", "Transfer-Encoding", "Access-Control-Allow-Origin",
				"X-Session-Token")) {
			assertThatIllegalArgumentException().isThrownBy(() -> replay.setHeader(name, "x"))
				.withMessageNotContaining("io.github");
			assertThatIllegalArgumentException().isThrownBy(() -> replay.addHeader(name, "x"));
		}
		replay.setHeader("Cache-Control", "no-store");
		assertThat(replay.headers().getFirst("Cache-Control")).isEqualTo("no-store");
	}

	@Test
	void theRecordIsNotChangedAndAFailingCustomizerLeavesNoChanges() {
		IdempotentWebProperties web = BoundProperties.bind(IdempotentWebProperties.class,
				Map.of("idempotent.web.excluded-response-headers", "X-Session-Token"));
		WebContract contract = new WebContract(new IdempotencyResponseHeaders("Idempotency-Key", "Idempotent-Replayed"),
				web, 1024, () -> List.of((replay) -> {
					replay.body()[0] = 'X';
					replay.setHeader("X-First", "1");
				}, (replay) -> {
					replay.setHeader("X-Broken", "1");
					throw new IllegalStateException("boom");
				}, (replay) -> replay.addHeader("Location", "/payments/2")));
		HttpHeaders headers = contract.replayed("op", "k", this.recorded);
		assertThat(this.recorded.body()).isEqualTo("{\"run\":1}".getBytes());
		assertThat(this.recorded.headers().get("Location")).containsExactly("/payments/1");
		assertThat(headers.headerNames()).containsExactlyInAnyOrder("Content-Type", "Location", "X-First");
		assertThat(headers.get("Location")).containsExactly("/payments/1", "/payments/2");
	}

}
