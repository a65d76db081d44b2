package io.github.idempotent.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Redis store, under {@code idempotent.store.redis}.
 *
 * @param waitReplicas Number of replicas that must acknowledge each claim and result
 * (Redis WAIT); 0 does not wait.
 * @param waitTimeout Longest wait for replica acknowledgements; then the call goes on
 * with a warning.
 * @param allowEvictingPolicy Whether the store starts on a Redis whose maxmemory-policy
 * may evict records.
 * @param claimMemoryLimit Share of Redis's maxmemory in use above which new claims are
 * refused as the store being full.
 */
public record IdempotentRedisProperties(int waitReplicas, @DefaultValue("500ms") Duration waitTimeout,
		boolean allowEvictingPolicy, @DefaultValue("0.9") double claimMemoryLimit) {

}
