package io.github.idempotent.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.idempotent.autoconfigure.IdempotentProperties.StoreType;
import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.redis.RedisIdempotencyStore;

@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(RedisConnectionFactory.class)
@ConditionalOnBean(RedisConnectionFactory.class)
@ConditionalOnStoreType(StoreType.REDIS)
class RedisStoreConfiguration {

	@Bean
	@ConditionalOnMissingBean(IdempotencyStore.class)
	RedisIdempotencyStore redisIdempotencyStore(RedisConnectionFactory connectionFactory,
			IdempotentProperties properties) {
		RedisIdempotencyStore store = new RedisIdempotencyStore(connectionFactory);
		IdempotentRedisProperties redis = properties.getStore().getRedis();
		store.setClaimMemoryLimit(redis.getClaimMemoryLimit());
		if (redis.getWaitReplicas() > 0) {
			store.setWaitReplicas(redis.getWaitReplicas(), redis.getWaitTimeout());
		}
		return store;
	}

}
