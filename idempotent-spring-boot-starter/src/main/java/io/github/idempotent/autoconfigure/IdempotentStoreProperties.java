package io.github.idempotent.autoconfigure;

import org.springframework.boot.context.properties.NestedConfigurationProperty;

/** Choice of the store, under {@code idempotent.store}. */
public class IdempotentStoreProperties {

	/**
	 * Store of idempotency records; auto picks Redis when a RedisConnectionFactory
	 * exists, else memory.
	 */
	private IdempotentProperties.StoreType type = IdempotentProperties.StoreType.AUTO;

	@NestedConfigurationProperty
	private final IdempotentRedisProperties redis = new IdempotentRedisProperties();

	@NestedConfigurationProperty
	private final IdempotentMemoryProperties memory = new IdempotentMemoryProperties();

	public IdempotentProperties.StoreType getType() {
		return this.type;
	}

	public void setType(IdempotentProperties.StoreType type) {
		this.type = type;
	}

	public IdempotentRedisProperties getRedis() {
		return this.redis;
	}

	public IdempotentMemoryProperties getMemory() {
		return this.memory;
	}

}
