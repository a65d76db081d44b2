package io.github.idempotent.web;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;

import io.github.idempotent.core.RecordedResponse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class ReplayCustomizersTests {

	private final ReplayedHeaders replayedHeaders = new ReplayedHeaders(
			List.of("Idempotency-Key", "Idempotent-Replayed", "X-Session-Token"));

	private final RecordedResponse recorded = new RecordedResponse(201,
			Map.of("Content-Type", List.of("application/json"), "Location", List.of("/payments/1")),
			"{\"run\":1}".getBytes());

	@Test
	void headersTheLibraryOwnsOrNeverReplaysAreRefused() {
		ReplayedResponse replay = new ReplayedResponse("op", "k", 200, HttpHeaders.EMPTY, new byte[0], null,
				this.replayedHeaders);
		for (String name : List.of("Idempotent-Replayed", "idempotency-key", "Set-Cookie", "Authorization",
				"Content-Length", "Content-Type", "Transfer-Encoding", "Access-Control-Allow-Origin",
				"X-Session-Token")) {
			assertThatIllegalArgumentException().isThrownBy(() -> replay.setHeader(name, "x"))
				.withMessageNotContaining("io.github");
			assertThatIllegalArgumentException().isThrownBy(() -> replay.addHeader(name, "x"));
		}
		replay.setHeader("Cache-Control", "no-store");
		assertThat(replay.changes().getFirst("Cache-Control")).isEqualTo("no-store");
	}

	@Test
	void theRecordIsNotChangedAndAFailingCustomizerLeavesNoChanges() {
		ReplayCustomizers customizers = new ReplayCustomizers(List.of((replay) -> {
			replay.body()[0] = 'X';
			replay.setHeader("X-First", "1");
		}, (replay) -> {
			replay.setHeader("X-Broken", "1");
			throw new IllegalStateException("boom");
		}, (replay) -> replay.addHeader("Location", "/payments/2")), this.replayedHeaders);
		HttpHeaders changes = customizers.recorded("op", "k", this.recorded);
		assertThat(this.recorded.body()).isEqualTo("{\"run\":1}".getBytes());
		assertThat(this.recorded.headers().get("Location")).containsExactly("/payments/1");
		assertThat(changes.toSingleValueMap()).containsOnlyKeys("X-First", "Location");
		assertThat(changes.get("Location")).containsExactly("/payments/1", "/payments/2");
	}

	@Test
	void aReplayedEntityIsReturnedAnewWithTheHeadersSet() {
		ReplayCustomizers customizers = new ReplayCustomizers(List.of((replay) -> {
			assertThat(replay.status()).isEqualTo(201);
			assertThat(replay.value()).isEqualTo("body");
			assertThat(replay.isRecorded()).isFalse();
			replay.setHeader("X-Run", "replayed");
		}), this.replayedHeaders);
		ResponseEntity<String> entity = ResponseEntity.status(HttpStatus.CREATED).header("X-Run", "1").body("body");
		Object replayed = customizers.value("op", "k", entity, 200, (headers) -> {
			throw new AssertionError("an entity carries its headers");
		});
		assertThat(replayed).isInstanceOfSatisfying(ResponseEntity.class, (result) -> {
			assertThat(result.getStatusCode()).isEqualTo(HttpStatus.CREATED);
			assertThat(result.getHeaders().get("X-Run")).containsExactly("replayed");
			assertThat(result.getBody()).isEqualTo("body");
		});
		assertThat(entity.getHeaders().get("X-Run")).containsExactly("1");
	}

	@Test
	void withoutCustomizersAValueIsReturnedAsItIs() {
		Object value = new Object();
		assertThat(new ReplayCustomizers(List.of(), this.replayedHeaders).value("op", "k", value, 200, (headers) -> {
		})).isSameAs(value);
	}

}
