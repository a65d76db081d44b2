package io.github.idempotent.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

import io.github.idempotent.core.FailureMode;

/**
 * Configuration of {@code @Idempotent}.
 *
 * @param enabled Whether @Idempotent methods are guarded.
 * @param keyPrefix Prefix of every record key; the same on every instance of one
 * application, different between applications that share a store.
 * @param fingerprintSecret Secret under which payload fingerprints are keyed
 * (HMAC-SHA256), the same on every instance. Unset: unkeyed SHA-256.
 * @param ttl Time to keep and replay completed results.
 * @param lease Lease of an in-progress call, renewed every third of it while the method
 * runs.
 * @param maxDuration Longest time one call may hold its key, at least the lease; past it
 * the lease is no longer renewed and the result is not stored.
 * @param waitFor Time a duplicate waits for the first call to finish before it is
 * refused.
 * @param inProcessWaitFor Time a duplicate of an @Async, @EventListener or @Scheduled
 * call waits when its annotation sets no waitFor. Unset: the operation's lease.
 * @param retryAfter Delay suggested to refused callers (HTTP Retry-After).
 * @param failureMode What to do when the store cannot be reached: refuse the call
 * (closed) or run it unprotected (open).
 * @param maxKeyLength Longest key a caller may send, in characters.
 * @param maxResultSize Largest encoded result that is stored.
 * @param defaultScope Scope of keys when the annotation names none.
 * @param resultCompression Compression of stored results.
 * @param store Choice and settings of the store.
 * @param messaging Settings of @Idempotent message listeners.
 * @param localCache Local cache of completed results in front of the store.
 */
@ConfigurationProperties("idempotent")
public record IdempotentProperties(@DefaultValue("true") boolean enabled, @DefaultValue("idempotent") String keyPrefix,
		@Nullable String fingerprintSecret, @DefaultValue("24h") Duration ttl, @DefaultValue("30s") Duration lease,
		@DefaultValue("10m") Duration maxDuration, @DefaultValue("0") Duration waitFor,
		@Nullable Duration inProcessWaitFor, @DefaultValue("1s") Duration retryAfter,
		@DefaultValue("closed") FailureMode failureMode, @DefaultValue("255") int maxKeyLength,
		@DefaultValue("1MB") DataSize maxResultSize, @DefaultValue("principal") DefaultScope defaultScope,
		@DefaultValue @NestedConfigurationProperty IdempotentResultCompressionProperties resultCompression,
		@DefaultValue @NestedConfigurationProperty IdempotentStoreProperties store,
		@DefaultValue @NestedConfigurationProperty IdempotentMessagingProperties messaging,
		@DefaultValue @NestedConfigurationProperty IdempotentLocalCacheProperties localCache) {

	/**
	 * The record's own toString would print the fingerprint secret wherever this is
	 * logged.
	 */
	@Override
	public String toString() {
		return "IdempotentProperties[enabled=" + this.enabled + ", keyPrefix=" + this.keyPrefix + ", fingerprintSecret="
				+ ((this.fingerprintSecret != null) ? "******" : null) + ", ttl=" + this.ttl + ", lease=" + this.lease
				+ ", maxDuration=" + this.maxDuration + ", waitFor=" + this.waitFor + ", inProcessWaitFor="
				+ this.inProcessWaitFor + ", retryAfter=" + this.retryAfter + ", failureMode=" + this.failureMode
				+ ", maxKeyLength=" + this.maxKeyLength + ", maxResultSize=" + this.maxResultSize + ", defaultScope="
				+ this.defaultScope + ", resultCompression=" + this.resultCompression + ", store=" + this.store
				+ ", messaging=" + this.messaging + ", localCache=" + this.localCache + "]";
	}

	/** Scope of keys when the annotation names none. */
	public enum DefaultScope {

		/** The authenticated principal's name (Spring Security), else global. */
		PRINCIPAL,

		/** One scope for every caller: keys must be unguessable and unique per client. */
		GLOBAL

	}

	/** Kinds of store. */
	public enum StoreType {

		/** Redis when a RedisConnectionFactory exists, else memory. */
		AUTO,

		/** Redis, through the application's RedisConnectionFactory. */
		REDIS,

		/** A relational table, through the application's DataSource. */
		JDBC,

		/** This JVM's memory: one instance only. */
		MEMORY

	}

}
