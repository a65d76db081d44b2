package io.github.idempotent.test;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;

/**
 * The in-memory store in {@code @WebMvcTest} and {@code @WebFluxTest} slices, which
 * configure neither Redis nor a {@code DataSource}, whatever store the application's
 * {@code idempotent.store.type} names. A test that defines an {@link IdempotencyStore}
 * bean keeps it; {@code idempotent.test.store=application} leaves the choice to the
 * application's configuration (with the auto-configuration of that store imported into
 * the slice). Not applied outside slices.
 */
@AutoConfiguration(before = IdempotentAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "idempotent.enabled", matchIfMissing = true)
@ConditionalOnProperty(name = "idempotent.test.store", havingValue = "memory", matchIfMissing = true)
public final class IdempotencyTestStoreAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(IdempotencyStore.class)
	InMemoryIdempotencyStore idempotencyTestStore() {
		return new InMemoryIdempotencyStore();
	}

}
