package io.github.idempotent.autoconfigure;

import java.util.Map;

import org.junit.jupiter.api.Test;

import io.github.idempotent.testsupport.BoundProperties;

import static org.assertj.core.api.Assertions.assertThat;

class IdempotentPropertiesTests {

	@Test
	void toStringDoesNotShowTheFingerprintSecret() {
		IdempotentProperties properties = BoundProperties.bind(IdempotentProperties.class,
				Map.of("idempotent.fingerprint-secret", "s3cr3t-hmac-key", "idempotent.key-prefix", "orders"));
		assertThat(properties.fingerprintSecret()).isEqualTo("s3cr3t-hmac-key");
		assertThat(properties.toString()).contains("keyPrefix=orders").doesNotContain("s3cr3t-hmac-key");
	}

}
