package io.github.idempotent.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.idempotent.core.IdempotentAnnotationAutoConfiguration;
import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;
import io.github.idempotent.testsupport.ForwardingIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code idempotent.result-compression.*}: what reaches the store for a large and a small
 * result, with the defaults and with compression off.
 */
class ResultCompressionAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotentAutoConfiguration.class,
				IdempotentAnnotationAutoConfiguration.class))
		.withUserConfiguration(RecordingConfiguration.class)
		.withPropertyValues("idempotent.default-scope=global");

	@Test
	void resultsAbove1KbAreStoredDeflatedByDefault() {
		this.runner.run((context) -> {
			Documents documents = context.getBean(Documents.class);
			RecordingStore store = context.getBean(RecordingStore.class);
			// Encoded as a JSON string: the text and its two quotes, 1 025 and 1 024
			// bytes.
			String large = documents.text("a", 1023);
			assertThat(documents.text("a", 1023)).isEqualTo(large);
			String small = documents.text("b", 1022);
			assertThat(documents.text("b", 1022)).isEqualTo(small);
			assertThat(store.stored).hasSize(2);
			assertThat(store.stored.get(0)[0]).isEqualTo((byte) 'Z');
			assertThat(store.stored.get(0).length).isLessThan(100);
			assertThat(store.stored.get(1)[0]).isEqualTo((byte) 'V');
			assertThat(store.stored.get(1).length).isEqualTo(1 + 1024);
		});
	}

	@Test
	void thresholdIsADataSize() {
		this.runner.withPropertyValues("idempotent.result-compression.threshold=2KB").run((context) -> {
			context.getBean(Documents.class).text("a", 2046);
			context.getBean(Documents.class).text("b", 2047);
			List<byte[]> stored = context.getBean(RecordingStore.class).stored;
			assertThat(stored.get(0)[0]).isEqualTo((byte) 'V');
			assertThat(stored.get(1)[0]).isEqualTo((byte) 'Z');
		});
	}

	@Test
	void compressionCanBeTurnedOff() {
		this.runner.withPropertyValues("idempotent.result-compression.enabled=false").run((context) -> {
			context.getBean(Documents.class).text("a", 10_000);
			byte[] stored = context.getBean(RecordingStore.class).stored.get(0);
			assertThat(stored[0]).isEqualTo((byte) 'V');
			assertThat(stored.length).isGreaterThan(10_000);
		});
	}

	/**
	 * A negative threshold is a mistake, not a way to turn compression off (that is
	 * {@code enabled=false}): the start-up fails rather than storing every result
	 * uncompressed without a word.
	 */
	@Test
	void negativeThresholdFailsTheStartUp() {
		this.runner.withPropertyValues("idempotent.result-compression.threshold=-1KB")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("must not be negative"));
	}

	@Configuration(proxyBeanMethods = false)
	static class RecordingConfiguration {

		@Bean
		RecordingStore recordingStore() {
			return new RecordingStore();
		}

		@Bean
		Documents documents() {
			return new Documents();
		}

	}

	static class Documents {

		@Idempotent(key = "#key")
		public String text(String key, int length) {
			return "x".repeat(length);
		}

	}

	/**
	 * The in-memory store, keeping what the executor asked it to store.
	 */
	static class RecordingStore extends ForwardingIdempotencyStore {

		final List<byte[]> stored = new ArrayList<>();

		RecordingStore() {
			super(new InMemoryIdempotencyStore());
		}

		@Override
		public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result,
				Duration ttl) {
			this.stored.add(result.bytes());
			return super.complete(key, token, fingerprint, result, ttl);
		}

	}

}
