package io.github.idempotent.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.idempotent.core.IdempotentAnnotationAutoConfiguration;
import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.cache.CachingIdempotencyStore;
import io.github.idempotent.store.jdbc.JdbcIdempotencyPurger;
import io.github.idempotent.store.jdbc.JdbcIdempotencyStore;
import io.github.idempotent.store.memory.InMemoryIdempotencyStore;
import io.github.idempotent.store.redis.RedisIdempotencyStore;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every store type with the local cache on and off and {@code join-transaction} on and
 * off starts, guards a method, and wires the beans in the open: the caching store is a
 * bean of its own in front of the store bean, never a bean swapped behind the container's
 * back, so whoever needs the concrete store (the JDBC purger) still gets it.
 */
class StoreCombinationsAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, DataSourceAutoConfiguration.class,
				IdempotentAutoConfiguration.class, IdempotentAnnotationAutoConfiguration.class))
		.withUserConfiguration(GuardedConfiguration.class)
		.withPropertyValues("spring.data.redis.host=" + TestRedis.host(), "spring.data.redis.port=" + TestRedis.port(),
				"spring.datasource.generate-unique-name=true", "idempotent.default-scope=global");

	static List<Arguments> combinations() {
		List<Arguments> combinations = new ArrayList<>();
		for (String type : List.of("redis", "jdbc", "memory")) {
			for (boolean localCache : List.of(false, true)) {
				for (boolean joinTransaction : List.of(false, true)) {
					combinations.add(Arguments.of(type, localCache, joinTransaction));
				}
			}
		}
		return combinations;
	}

	@ParameterizedTest(name = "store {0}, local cache {1}, join-transaction {2}")
	@MethodSource("combinations")
	void everyCombinationStartsAndGuards(String type, boolean localCache, boolean joinTransaction) {
		this.contextRunner
			.withPropertyValues("idempotent.store.type=" + type, "idempotent.local-cache.enabled=" + localCache,
					"idempotent.store.jdbc.join-transaction=" + joinTransaction)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				Class<? extends IdempotencyStore> storeType = switch (type) {
					case "redis" -> RedisIdempotencyStore.class;
					case "jdbc" -> JdbcIdempotencyStore.class;
					default -> InMemoryIdempotencyStore.class;
				};
				assertThat(context).hasSingleBean(storeType);
				IdempotencyStore used = context.getBean(IdempotencyExecutor.class).getStore();
				if (localCache) {
					assertThat(context).hasSingleBean(CachingIdempotencyStore.class);
					assertThat(used).isInstanceOf(CachingIdempotencyStore.class);
					CachingIdempotencyStore cache = (CachingIdempotencyStore) used;
					assertThat(cache.getDelegate()).isSameAs(context.getBean(storeType));
					if (type.equals("redis")) {
						// Kept right by Redis invalidation tracking: filled by tracked
						// reads only.
						assertThat(cache.getTracking()).isNotNull();
					}
					else {
						assertThat(cache.isWriteThrough()).isEqualTo(!joinTransaction);
					}
					assertThat(context.getBean(IdempotencyStore.class)).isSameAs(used);
				}
				else {
					assertThat(context).doesNotHaveBean(CachingIdempotencyStore.class);
					assertThat(used).isSameAs(context.getBean(storeType));
				}
				if (type.equals("jdbc")) {
					assertThat(context).hasSingleBean(JdbcIdempotencyPurger.class);
					assertThat(context.getBean(JdbcIdempotencyStore.class).isJoinTransaction())
						.isEqualTo(joinTransaction);
				}
				Guarded guarded = context.getBean(Guarded.class);
				String key = UUID.randomUUID().toString();
				assertThat(guarded.run(key)).isEqualTo(guarded.run(key));
				assertThat(guarded.runs()).isOne();
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class GuardedConfiguration {

		@Bean
		Guarded guarded() {
			return new Guarded();
		}

	}

	static class Guarded {

		private final AtomicInteger runs = new AtomicInteger();

		@Idempotent(key = "#key")
		public String run(String key) {
			return "run " + this.runs.incrementAndGet();
		}

		int runs() {
			return this.runs.get();
		}

	}

}
