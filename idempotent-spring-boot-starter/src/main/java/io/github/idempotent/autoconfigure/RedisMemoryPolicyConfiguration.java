package io.github.idempotent.autoconfigure;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.LazyInitializationExcludeFilter;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.idempotent.store.redis.RedisIdempotencyStore;
import io.github.idempotent.store.redis.RedisMemoryPolicyGuard;

/**
 * Refuses to start the Redis store on a Redis that may evict its records, unless
 * {@code idempotent.store.redis.allow-evicting-policy} accepts it; imported after
 * {@link RedisStoreConfiguration}, so that it also guards a store the application
 * defined.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(RedisConnectionFactory.class)
@ConditionalOnBean(RedisIdempotencyStore.class)
class RedisMemoryPolicyConfiguration {

	static final String EVICTED_KEYS_METER = "idempotent.store.redis.evicted.keys";

	static final String EVICTING_METER = "idempotent.store.redis.evicting";

	// Checked on the store's own connection factory: the application's primary one may
	// be another Redis.
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnSingleCandidate(RedisIdempotencyStore.class)
	RedisMemoryPolicyGuard redisMemoryPolicyGuard(RedisIdempotencyStore store, IdempotentProperties properties) {
		RedisMemoryPolicyGuard guard = new RedisMemoryPolicyGuard(store.getConnectionFactory(),
				properties.getStore().getRedis().isAllowEvictingPolicy());
		guard.check();
		return guard;
	}

	// With lazy initialization the guard would be created by nobody: the check is its
	// creation.
	@Bean
	static LazyInitializationExcludeFilter redisMemoryPolicyGuardEagerly() {
		return LazyInitializationExcludeFilter.forBeanTypes(RedisMemoryPolicyGuard.class);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterBinder.class)
	static class MetricsConfiguration {

		// Asks for the guard on binding: this nested configuration registers its beans
		// before the guard's.
		@Bean
		MeterBinder redisMemoryPolicyMeters(ObjectProvider<RedisMemoryPolicyGuard> guards) {
			return (registry) -> {
				RedisMemoryPolicyGuard guard = guards.getIfUnique();
				if (guard == null) {
					return;
				}
				// Each scrape reads INFO again in the background: a policy changed at
				// runtime shows from the next one.
				Gauge.builder(EVICTED_KEYS_METER, guard, (g) -> {
					long evicted = g.evictedKeys();
					return (evicted < 0) ? Double.NaN : evicted;
				})
					.description("Keys the store's Redis has evicted since it started (INFO evicted_keys); an "
							+ "evicted record lets a retry run its method again")
					.register(registry);
				Gauge.builder(EVICTING_METER, guard, (g) -> g.isEvicting() ? 1 : 0)
					.description("Whether the store's Redis, as last checked, may evict records (bounded memory, "
							+ "maxmemory-policy other than noeviction)")
					.register(registry);
			};
		}

	}

}
