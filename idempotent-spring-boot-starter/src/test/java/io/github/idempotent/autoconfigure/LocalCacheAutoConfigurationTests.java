package io.github.idempotent.autoconfigure;

import java.time.Duration;

import com.github.benmanes.caffeine.cache.Caffeine;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.cache.CachingIdempotencyStore;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;

class LocalCacheAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotentAutoConfiguration.class))
		.withPropertyValues("idempotent.store.type=memory");

	@Test
	void offByDefault() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(IdempotencyStore.class);
			assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(InMemoryIdempotencyStore.class);
		});
	}

	@Test
	void whenEnabledTheCacheWrapsTheStoreTheExecutorUses() {
		this.contextRunner
			.withPropertyValues("idempotent.local-cache.enabled=true", "idempotent.local-cache.maximum-size=50",
					"idempotent.local-cache.ttl=5s")
			.run((context) -> {
				IdempotencyStore store = context.getBean(IdempotencyStore.class);
				assertThat(store).isInstanceOf(CachingIdempotencyStore.class);
				assertThat(((CachingIdempotencyStore) store).getDelegate())
					.isInstanceOf(InMemoryIdempotencyStore.class);
				assertThat(context.getBean(IdempotencyExecutor.class).getStore()).isSameAs(store);
				IdempotentProperties.LocalCache cache = context.getBean(IdempotentProperties.class).getLocalCache();
				assertThat(cache.getMaximumSize()).isEqualTo(50);
				assertThat(cache.getTtl()).isEqualTo(Duration.ofSeconds(5));
			});
	}

	@Test
	void doesNotWriteThroughResultsThatJoinTheCallersTransaction() {
		this.contextRunner
			.withPropertyValues("idempotent.local-cache.enabled=true", "idempotent.store.jdbc.join-transaction=true")
			.run((context) -> assertThat(context.getBean(CachingIdempotencyStore.class).isWriteThrough()).isFalse());
		this.contextRunner.withPropertyValues("idempotent.local-cache.enabled=true")
			.run((context) -> assertThat(context.getBean(CachingIdempotencyStore.class).isWriteThrough()).isTrue());
	}

	@Test
	void backsOffWithoutCaffeine() {
		this.contextRunner.withPropertyValues("idempotent.local-cache.enabled=true")
			.withClassLoader(new FilteredClassLoader(Caffeine.class))
			.run((context) -> assertThat(context.getBean(IdempotencyStore.class))
				.isInstanceOf(InMemoryIdempotencyStore.class));
	}

}
