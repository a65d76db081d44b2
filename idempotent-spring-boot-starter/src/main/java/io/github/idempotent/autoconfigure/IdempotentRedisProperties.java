package io.github.idempotent.autoconfigure;

import java.time.Duration;

/** Redis store, under {@code idempotent.store.redis}. */
public class IdempotentRedisProperties {

	/**
	 * Number of replicas that must acknowledge each claim and result (Redis WAIT); 0 does
	 * not wait.
	 */
	private int waitReplicas;

	/**
	 * Longest wait for replica acknowledgements; then the call goes on with a warning.
	 */
	private Duration waitTimeout = Duration.ofMillis(500);

	/** Whether the store starts on a Redis whose maxmemory-policy may evict records. */
	private boolean allowEvictingPolicy;

	/**
	 * Share of Redis's maxmemory in use above which new claims are refused as the store
	 * being full.
	 */
	private double claimMemoryLimit = 0.9;

	public double getClaimMemoryLimit() {
		return this.claimMemoryLimit;
	}

	public void setClaimMemoryLimit(double claimMemoryLimit) {
		this.claimMemoryLimit = claimMemoryLimit;
	}

	public boolean isAllowEvictingPolicy() {
		return this.allowEvictingPolicy;
	}

	public void setAllowEvictingPolicy(boolean allowEvictingPolicy) {
		this.allowEvictingPolicy = allowEvictingPolicy;
	}

	public int getWaitReplicas() {
		return this.waitReplicas;
	}

	public void setWaitReplicas(int waitReplicas) {
		this.waitReplicas = waitReplicas;
	}

	public Duration getWaitTimeout() {
		return this.waitTimeout;
	}

	public void setWaitTimeout(Duration waitTimeout) {
		this.waitTimeout = waitTimeout;
	}

}
