package io.github.idempotent.actuate;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.idempotent.core.IdempotentAnnotationAutoConfiguration;
import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.store.ClaimResult;
import io.github.idempotent.store.Fingerprint;
import io.github.idempotent.store.RecordKey;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.StoredResult;
import io.github.idempotent.store.cache.CachingIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;

class IdempotentActuatorAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotentAutoConfiguration.class,
				IdempotentAnnotationAutoConfiguration.class, IdempotentActuatorAutoConfiguration.class))
		.withPropertyValues("idempotent.store.type=memory");

	@Test
	void endpointWhenExposed() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=idempotency")
			.run((context) -> assertThat(context).hasSingleBean(IdempotencyEndpoint.class));
	}

	@Test
	void noEndpointUnlessExposed() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).doesNotHaveBean(IdempotencyEndpoint.class);
		});
	}

	@Test
	void noEndpointWhenItsAccessIsNone() {
		// Upper case: the runner's environment lacks the relaxed enum conversion of a
		// SpringApplication, where "none" works.
		this.runner
			.withPropertyValues("management.endpoints.web.exposure.include=idempotency",
					"management.endpoint.idempotency.access=NONE")
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyEndpoint.class));
	}

	@Test
	void backsOffWithoutActuator() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=idempotency")
			.withClassLoader(new FilteredClassLoader(Endpoint.class))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).doesNotHaveBean(IdempotencyEndpoint.class);
			});
	}

	@Test
	void backsOffWhenTheStoreCannotBeInspected() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=idempotency")
			.withBean(IdempotencyStore.class, PlainStore::new)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).doesNotHaveBean(IdempotencyEndpoint.class);
			});
	}

	@Test
	void deletesThroughTheLocalCacheSoThatItForgetsTheResult() {
		this.runner
			.withPropertyValues("management.endpoints.web.exposure.include=idempotency",
					"idempotent.local-cache.enabled=true")
			.run((context) -> {
				IdempotencyStore store = context.getBean(IdempotencyStore.class);
				assertThat(store).isInstanceOf(CachingIdempotencyStore.class);
				RecordKey key = RecordKey.of("idempotent", "_", "orders", "k-1", 512);
				Fingerprint fp = new Fingerprint("fp");
				String token = ((ClaimResult.Acquired) store.claim(key, fp, Duration.ofSeconds(30))).token();
				store.complete(key, token, fp, new StoredResult(new byte[] { 1 }), Duration.ofMinutes(1));
				assertThat(context.getBean(IdempotencyEndpoint.class)
					.delete(new String[] { "orders", "k-1" }, null, null,
							org.springframework.boot.actuate.endpoint.SecurityContext.NONE))
					.containsEntry("deleted", true);
				assertThat(store.claim(key, fp, Duration.ofSeconds(30))).isInstanceOf(ClaimResult.Acquired.class);
			});
	}

	/**
	 * A store of an application's own that does not implement the inspection SPI.
	 */
	static class PlainStore implements IdempotencyStore {

		@Override
		public ClaimResult claim(RecordKey key, Fingerprint fingerprint, Duration lease) {
			return new ClaimResult.Acquired("t");
		}

		@Override
		public boolean complete(RecordKey key, String token, Fingerprint fingerprint, StoredResult result,
				Duration ttl) {
			return true;
		}

		@Override
		public boolean release(RecordKey key, String token) {
			return true;
		}

		@Override
		public boolean renew(RecordKey key, String token, Fingerprint fingerprint, Duration lease) {
			return true;
		}

	}

}
