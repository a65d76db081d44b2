package io.github.idempotent.actuate;

import java.util.Map;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.Assert;

import io.github.idempotent.store.redis.RedisMemoryPolicy;

/**
 * Health of the Redis store's memory, read from {@code INFO} on every check: {@code DOWN}
 * when a server may evict records and the application has not accepted it, or when Redis
 * cannot be reached.
 */
public class RedisMemoryHealthIndicator extends AbstractHealthIndicator {

	private final RedisConnectionFactory connectionFactory;

	private final boolean evictingPolicyAllowed;

	private final double claimMemoryLimit;

	/**
	 * @param evictingPolicyAllowed whether the application accepts an evicting Redis
	 * @param claimMemoryLimit share of {@code maxmemory} above which claims are refused
	 */
	public RedisMemoryHealthIndicator(RedisConnectionFactory connectionFactory, boolean evictingPolicyAllowed,
			double claimMemoryLimit) {
		super("Could not read the memory of the idempotency store's Redis");
		Assert.notNull(connectionFactory, "connectionFactory must not be null");
		this.connectionFactory = connectionFactory;
		this.evictingPolicyAllowed = evictingPolicyAllowed;
		this.claimMemoryLimit = claimMemoryLimit;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		builder.up();
		for (RedisMemoryPolicy policy : RedisMemoryPolicy.read(this.connectionFactory)) {
			if (policy.evicts() && !this.evictingPolicyAllowed) {
				builder.down();
			}
			builder.withDetail(policy.server(),
					Map.of("maxmemory", policy.maxmemory(), "maxmemoryPolicy", policy.policy(), "evicts",
							policy.evicts(), "usedMemory", policy.usedMemory(), "evictedKeys", policy.evictedKeys(),
							"claimsRefused", policy.isAbove(this.claimMemoryLimit)));
		}
	}

}
