package io.github.idempotent.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The record key names its scope, operation and client key unambiguously, and a client
 * cannot choose where Redis Cluster puts its record.
 */
class IdempotencyKeyTests {

	@Test
	void aSeparatorInTheNameCannotMakeTwoOperationsShareARecord() {
		assertThat(IdempotencyKey.of("p", "_", "a:b", "c", 512))
			.isNotEqualTo(IdempotencyKey.of("p", "_", "a", "b:c", 512));
		assertThat(IdempotencyKey.of("p", "x:y", "n", "k", 512))
			.isNotEqualTo(IdempotencyKey.of("p", "x", "y:n", "k", 512));
		assertThat(IdempotencyKey.of("p", "_", "n", "%3A", 512))
			.isNotEqualTo(IdempotencyKey.of("p", "_", "n", ":", 512));
	}

	@Test
	void aHashTagInTheClientKeyDoesNotPickTheClusterSlot() {
		// Redis Cluster hashes only what stands between the first { and the next }.
		String value = IdempotencyKey.of("idempotent", "_", "op", "{victim}", 512).value();
		assertThat(value).doesNotContain("{").doesNotContain("}");
		assertThat(IdempotencyKey.of("idempotent", "{t}", "op", "k", 512).value()).doesNotContain("{");
	}

}
