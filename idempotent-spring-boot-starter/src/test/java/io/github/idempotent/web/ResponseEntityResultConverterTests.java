package io.github.idempotent.web;

import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.ResolvableType;
import org.springframework.http.HttpHeaders;
import org.springframework.http.ResponseEntity;

import io.github.idempotent.core.JacksonResultCodec;
import io.github.idempotent.core.ResultCodec;
import io.github.idempotent.testsupport.BoundProperties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code ResponseEntity} result replays with its status, its replayed headers and its
 * typed body, through the codec the auto-configuration builds (the stored form is a
 * package-private record that Jackson writes and reads).
 */
class ResponseEntityResultConverterTests {

	private final WebContract contract = new WebContract(
			new IdempotencyResponseHeaders("Idempotency-Key", "Idempotent-Replayed"),
			BoundProperties.defaults(IdempotentWebProperties.class), 1024, List::of);

	private final ResultCodec codec = new JacksonResultCodec(new JsonMapper(),
			List.of(new ResponseEntityResultConverter(this.contract)));

	@Test
	void aResponseEntityReplaysWithItsStatusHeadersAndTypedBody() {
		ResolvableType returnType = ResolvableType.forClassWithGenerics(ResponseEntity.class, Receipt.class);
		ResultCodec.Binding binding = this.codec.bind(returnType);
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		binding.encode(ResponseEntity.status(201)
			.header("Location", "/orders/7")
			.header(HttpHeaders.SET_COOKIE, "session=secret")
			.body(new Receipt("7", Map.of("total", "12.50"))), out);
		byte[] stored = out.toByteArray();
		ResponseEntity<?> replayed = (ResponseEntity<?>) binding.decode(stored, 0, stored.length);
		assertThat(replayed.getStatusCode().value()).isEqualTo(201);
		assertThat(replayed.getHeaders().get("Location")).containsExactly("/orders/7");
		assertThat(replayed.getHeaders().containsHeader(HttpHeaders.SET_COOKIE)).isFalse();
		assertThat(replayed.getBody()).isEqualTo(new Receipt("7", Map.of("total", "12.50")));
	}

	record Receipt(String orderNo, Map<String, String> amounts) {
	}

}
