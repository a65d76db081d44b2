package io.github.idempotent.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.util.unit.DataSize;

import io.github.idempotent.core.FailureMode;

/** Configuration of {@code @Idempotent}. */
@ConfigurationProperties("idempotent")
public class IdempotentProperties {

	/** Whether @Idempotent methods are guarded. */
	private boolean enabled = true;

	/**
	 * Prefix of every record key; the same on every instance of one application,
	 * different between applications that share a store.
	 */
	private String keyPrefix = "idempotent";

	/**
	 * Secret under which payload fingerprints are keyed (HMAC-SHA256), the same on every
	 * instance. Unset: unkeyed SHA-256.
	 */
	private @Nullable String fingerprintSecret;

	/** Time to keep and replay completed results. */
	private Duration ttl = Duration.ofHours(24);

	/** Lease of an in-progress call, renewed every third of it while the method runs. */
	private Duration lease = Duration.ofSeconds(30);

	/**
	 * Longest time one call may hold its key, at least the lease; past it the lease is no
	 * longer renewed and the result is not stored.
	 */
	private Duration maxDuration = Duration.ofMinutes(10);

	/** Time a duplicate waits for the first call to finish before it is refused. */
	private Duration waitFor = Duration.ZERO;

	/**
	 * Time a duplicate of an @Async, @EventListener or @Scheduled call waits when its
	 * annotation sets no waitFor. Unset: the operation's lease.
	 */
	private @Nullable Duration inProcessWaitFor;

	/** Delay suggested to refused callers (HTTP Retry-After). */
	private Duration retryAfter = Duration.ofSeconds(1);

	/**
	 * What to do when the store cannot be reached: refuse the call (closed) or run it
	 * unprotected (open).
	 */
	private FailureMode failureMode = FailureMode.CLOSED;

	/** Longest key a caller may send, in characters. */
	private int maxKeyLength = 255;

	/** Largest encoded result that is stored. */
	private DataSize maxResultSize = DataSize.ofMegabytes(1);

	/** Scope of keys when the annotation names none. */
	private DefaultScope defaultScope = DefaultScope.PRINCIPAL;

	@NestedConfigurationProperty
	private final IdempotentResultCompressionProperties resultCompression = new IdempotentResultCompressionProperties();

	@NestedConfigurationProperty
	private final IdempotentStoreProperties store = new IdempotentStoreProperties();

	@NestedConfigurationProperty
	private final IdempotentMessagingProperties messaging = new IdempotentMessagingProperties();

	@NestedConfigurationProperty
	private final IdempotentLocalCacheProperties localCache = new IdempotentLocalCacheProperties();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public @Nullable String getFingerprintSecret() {
		return this.fingerprintSecret;
	}

	public void setFingerprintSecret(@Nullable String fingerprintSecret) {
		this.fingerprintSecret = fingerprintSecret;
	}

	public Duration getTtl() {
		return this.ttl;
	}

	public void setTtl(Duration ttl) {
		this.ttl = ttl;
	}

	public Duration getMaxDuration() {
		return this.maxDuration;
	}

	public void setMaxDuration(Duration maxDuration) {
		this.maxDuration = maxDuration;
	}

	public Duration getLease() {
		return this.lease;
	}

	public void setLease(Duration lease) {
		this.lease = lease;
	}

	public Duration getWaitFor() {
		return this.waitFor;
	}

	public void setWaitFor(Duration waitFor) {
		this.waitFor = waitFor;
	}

	public @Nullable Duration getInProcessWaitFor() {
		return this.inProcessWaitFor;
	}

	public void setInProcessWaitFor(@Nullable Duration inProcessWaitFor) {
		this.inProcessWaitFor = inProcessWaitFor;
	}

	public Duration getRetryAfter() {
		return this.retryAfter;
	}

	public void setRetryAfter(Duration retryAfter) {
		this.retryAfter = retryAfter;
	}

	public FailureMode getFailureMode() {
		return this.failureMode;
	}

	public void setFailureMode(FailureMode failureMode) {
		this.failureMode = failureMode;
	}

	public int getMaxKeyLength() {
		return this.maxKeyLength;
	}

	public void setMaxKeyLength(int maxKeyLength) {
		this.maxKeyLength = maxKeyLength;
	}

	public DataSize getMaxResultSize() {
		return this.maxResultSize;
	}

	public void setMaxResultSize(DataSize maxResultSize) {
		this.maxResultSize = maxResultSize;
	}

	public IdempotentResultCompressionProperties getResultCompression() {
		return this.resultCompression;
	}

	public DefaultScope getDefaultScope() {
		return this.defaultScope;
	}

	public void setDefaultScope(DefaultScope defaultScope) {
		this.defaultScope = defaultScope;
	}

	public IdempotentStoreProperties getStore() {
		return this.store;
	}

	public IdempotentMessagingProperties getMessaging() {
		return this.messaging;
	}

	public IdempotentLocalCacheProperties getLocalCache() {
		return this.localCache;
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
