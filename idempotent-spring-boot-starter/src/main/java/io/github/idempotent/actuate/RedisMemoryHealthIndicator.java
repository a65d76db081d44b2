package io.github.idempotent.actuate;

import java.util.Map;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.Assert;

import io.github.idempotent.store.redis.RedisMemoryPolicy;

/**
 * Health of the Redis store's memory, read from {@code INFO} whenever it is asked (every
 * node of a cluster), so that a restart, a failover to a differently configured server or
 * a policy changed at runtime shows at the next check: {@code DOWN} when a server may
 * evict records ({@link RedisMemoryPolicy#evicts()}) and the application has not accepted
 * it, or when Redis cannot be reached; {@code UP} otherwise. Its details are, per server,
 * the policy, the memory in use and its limit, the keys evicted since the server started,
 * and whether new claims are refused for want of room.
 */
public class RedisMemoryHealthIndicator extends AbstractHealthIndicator {

	private final RedisConnectionFactory connectionFactory;

	private final boolean evictingPolicyAllowed;

	private final double claimMemoryLimit;

	/**
	 * @param connectionFactory the store's connection factory
	 * @param evictingPolicyAllowed whether the application accepts a Redis that may evict
	 * records
	 * @param claimMemoryLimit share of {@code maxmemory} above which new claims are
	 * refused
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
