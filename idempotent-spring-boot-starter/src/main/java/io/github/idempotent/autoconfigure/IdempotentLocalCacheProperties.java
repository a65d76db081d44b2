package io.github.idempotent.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.util.unit.DataSize;

/** Local cache of completed results in front of the store (needs Caffeine). */
public class IdempotentLocalCacheProperties {

	/**
	 * Whether completed results are also kept in this JVM. Unset: on for the Redis store
	 * while invalidation tracking is established, off for the others.
	 */
	private @Nullable Boolean enabled;

	/** Largest total size of the results kept in the local cache, with their keys. */
	private DataSize maximumSize = DataSize.ofMegabytes(16);

	/**
	 * Longest time a result stays in the local cache; keep it below the
	 * shortest @Idempotent ttl.
	 */
	private Duration ttl = Duration.ofMinutes(1);

	/**
	 * Longest time a result changed in Redis may still be replayed from the local cache.
	 */
	private Duration maxStaleness = Duration.ofMillis(500);

	public @Nullable Boolean getEnabled() {
		return this.enabled;
	}

	public void setEnabled(@Nullable Boolean enabled) {
		this.enabled = enabled;
	}

	public Duration getMaxStaleness() {
		return this.maxStaleness;
	}

	public void setMaxStaleness(Duration maxStaleness) {
		this.maxStaleness = maxStaleness;
	}

	public DataSize getMaximumSize() {
		return this.maximumSize;
	}

	public void setMaximumSize(DataSize maximumSize) {
		this.maximumSize = maximumSize;
	}

	public Duration getTtl() {
		return this.ttl;
	}

	public void setTtl(Duration ttl) {
		this.ttl = ttl;
	}

}
