package io.github.idempotent.autoconfigure;

import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Choice of the store, under {@code idempotent.store}.
 *
 * @param type Store of idempotency records; auto picks Redis when a
 * RedisConnectionFactory exists, else memory.
 * @param redis Settings of the Redis store.
 * @param memory Settings of the in-memory store.
 */
public record IdempotentStoreProperties(@DefaultValue("auto") IdempotentProperties.StoreType type,
		@DefaultValue @NestedConfigurationProperty IdempotentRedisProperties redis,
		@DefaultValue @NestedConfigurationProperty IdempotentMemoryProperties memory) {

}
