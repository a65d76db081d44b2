package io.github.idempotent.autoconfigure;

import java.time.Duration;

/**
 * Redis store, under {@code idempotent.store.redis}.
 */
public class IdempotentRedisProperties {

	/**
	 * Number of replicas that must acknowledge each claim and result (Redis WAIT) before
	 * the call goes on; 0 does not wait.
	 */
	private int waitReplicas;

	/**
	 * Longest wait for replica acknowledgements, after which the call goes on with a
	 * warning.
	 */
	private Duration waitTimeout = Duration.ofMillis(500);

	/**
	 * Whether the store starts on a Redis whose memory is bounded and whose
	 * maxmemory-policy may evict records (any but noeviction), accepting that a retry of
	 * an evicted key runs its method again.
	 */
	private boolean allowEvictingPolicy;

	/**
	 * Share of Redis's maxmemory in use (under maxmemory-policy noeviction) above which
	 * new claims are refused as the store being full, so that the calls in progress keep
	 * the rest for their results; 1 refuses nothing before Redis does.
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
