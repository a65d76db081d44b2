package io.github.idempotent.autoconfigure;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.idempotent.actuate.RedisMemoryHealthIndicator;
import io.github.idempotent.store.redis.RedisIdempotencyStore;
import io.github.idempotent.store.redis.RedisMemoryPolicy;

/**
 * Refuses to start the Redis store on a Redis that may evict its records, unless
 * accepted, and reports the policy as the health indicator {@code idempotentRedisMemory}.
 * Reads the store's own factory: the application's primary may be another Redis.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(RedisConnectionFactory.class)
@ConditionalOnBean(RedisIdempotencyStore.class)
@ConditionalOnSingleCandidate(RedisIdempotencyStore.class)
class RedisMemoryPolicyConfiguration {

	// Never lazy, and runs before any listener or web server starts.
	@Bean
	SmartInitializingSingleton redisMemoryPolicyCheck(RedisIdempotencyStore store, IdempotentProperties properties) {
		return () -> RedisMemoryPolicy.check(store.getConnectionFactory(),
				properties.getStore().getRedis().isAllowEvictingPolicy());
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
	@ConditionalOnEnabledHealthIndicator("idempotentRedisMemory")
	static class HealthConfiguration {

		@Bean
		@ConditionalOnMissingBean(name = "idempotentRedisMemoryHealthIndicator")
		RedisMemoryHealthIndicator idempotentRedisMemoryHealthIndicator(RedisIdempotencyStore store,
				IdempotentProperties properties) {
			IdempotentRedisProperties redis = properties.getStore().getRedis();
			return new RedisMemoryHealthIndicator(store.getConnectionFactory(), redis.isAllowEvictingPolicy(),
					redis.getClaimMemoryLimit());
		}

	}

}
