package io.github.idempotent.test.mvc;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;

import io.github.idempotent.store.memory.InMemoryIdempotencyStore;

/**
 * A store a test names for its slice.
 */
@TestConfiguration(proxyBeanMethods = false)
class OwnStoreConfiguration {

	static final InMemoryIdempotencyStore STORE = new InMemoryIdempotencyStore();

	@Bean
	InMemoryIdempotencyStore ownStore() {
		return STORE;
	}

}
