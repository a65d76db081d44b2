package io.github.idempotent.core;

import java.util.Map;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

class FingerprinterTests {

	private final JsonMapper mapper = new JsonMapper();

	@Test
	void aWriterMayCloseWhatItWritesToAndWriteAgain() {
		for (Fingerprinter fingerprinter : new Fingerprinter[] { new Fingerprinter(this.mapper, null),
				new Fingerprinter(this.mapper, "secret") }) {
			// Jackson closes the stream it wrote to.
			IdempotencyExecutor.FingerprintStream out = fingerprinter.stream();
			this.mapper.writeValue(out, Map.of("a", 1));
			this.mapper.writeValue(out, Map.of("b", 2));
			assertThat(out.fingerprint()).isNotNull();
		}
	}

	@Test
	void aSecretKeysTheFingerprint() {
		Object payload = Map.of("orderNo", "A-1");
		assertThat(new Fingerprinter(this.mapper, "secret").fingerprint(payload))
			.isNotEqualTo(new Fingerprinter(this.mapper, null).fingerprint(payload))
			.isNotEqualTo(new Fingerprinter(this.mapper, "other").fingerprint(payload))
			.isEqualTo(new Fingerprinter(this.mapper, "secret").fingerprint(payload));
	}

}
