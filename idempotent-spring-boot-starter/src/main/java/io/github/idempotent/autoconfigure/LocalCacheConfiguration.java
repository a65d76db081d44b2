package io.github.idempotent.autoconfigure;

import com.github.benmanes.caffeine.cache.Caffeine;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;
import org.springframework.util.unit.DataSize;

import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.RecordTracking;
import io.github.idempotent.store.cache.CachingIdempotencyStore;
import io.github.idempotent.store.redis.RedisIdempotencyStore;
import io.github.idempotent.store.redis.RedisRecordTracking;

/**
 * Puts a local cache of completed results in front of the store when Caffeine is on the
 * classpath (the starter brings it; an application may exclude it): by default for the
 * Redis store on Lettuce, kept right by Redis invalidation tracking
 * ({@link RedisRecordTracking}, a class of Lettuce's, created only when Lettuce is on the
 * classpath) and bypassed whenever tracking is not established; for any store with
 * {@code idempotent.local-cache.enabled=true} (a store without tracking then gets a cache
 * bounded by its TTL only). The caching store is a bean of its own, primary so that the
 * executor (and any other user of an {@link IdempotencyStore}) goes through it, while the
 * store behind it stays a bean of its concrete type for those that need that type (the
 * JDBC purger).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(Caffeine.class)
@Conditional(LocalCacheConfiguration.LocalCacheWanted.class)
class LocalCacheConfiguration {

	private static final Log logger = LogFactory.getLog(LocalCacheConfiguration.class);

	@Bean
	@Primary
	@ConditionalOnMissingBean(CachingIdempotencyStore.class)
	@ConditionalOnSingleCandidate(IdempotencyStore.class)
	CachingIdempotencyStore cachingIdempotencyStore(IdempotencyStore store, IdempotentProperties properties,
			ObjectProvider<RecordTracking> recordTracking, Environment environment) {
		IdempotentLocalCacheProperties cache = properties.getLocalCache();
		DataSize maximumSize = cache.getMaximumSize();
		if (maximumSize.compareTo(properties.getMaxResultSize()) < 0) {
			// Most likely a number of results from before the property became a size.
			logger.warn("idempotent.local-cache.maximum-size is " + maximumSize.toBytes() + " bytes, less than "
					+ "idempotent.max-result-size (" + properties.getMaxResultSize().toBytes() + " bytes): larger "
					+ "results are never cached. It is a size, not a number of results: give it a unit, e.g. 16MB");
		}
		RecordTracking tracking = recordTracking.getIfUnique();
		if (tracking != null && (tracking.isSupported() || cache.getEnabled() == null)) {
			// Unset on a setup that cannot track (Redis Cluster): a cache that never
			// serves.
			return new CachingIdempotencyStore(store, maximumSize, cache.getTtl(), tracking);
		}
		if (tracking != null) {
			logger.warn("idempotent.local-cache.enabled=true without invalidation tracking (" + tracking
					+ "): a result deleted from the store is still replayed from the local cache for up to "
					+ "idempotent.local-cache.ttl (" + cache.getTtl() + ")");
		}
		// A result completed in the caller's transaction may still roll back: it is
		// cached once read back from the store, never written through. (Read from the
		// environment: IdempotentJdbcProperties needs Boot's JDBC support.)
		boolean writeThrough = !environment.getProperty("idempotent.store.jdbc.join-transaction", Boolean.class, false);
		return new CachingIdempotencyStore(store, maximumSize, cache.getTtl(), writeThrough);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(
			name = { "org.springframework.data.redis.connection.RedisConnectionFactory", LocalCacheWanted.LETTUCE })
	@ConditionalOnBean(RedisIdempotencyStore.class)
	static class RedisTrackingConfiguration {

		// Tracks through the store's own connection factory: the application's primary
		// one may be another Redis.
		@Bean
		@ConditionalOnMissingBean(RecordTracking.class)
		@ConditionalOnSingleCandidate(RedisIdempotencyStore.class)
		RedisRecordTracking redisRecordTracking(RedisIdempotencyStore store, IdempotentProperties properties) {
			return new RedisRecordTracking(store.getConnectionFactory(), properties.getLocalCache().getMaxStaleness());
		}

	}

	/**
	 * Explicitly enabled, or unset with the Redis store on a class path with Lettuce
	 * (Jedis and Redisson have no invalidation tracking: the store says so when it
	 * starts).
	 */
	static final class LocalCacheWanted extends AnyNestedCondition {

		static final String LETTUCE = "io.lettuce.core.RedisClient";

		LocalCacheWanted() {
			super(ConfigurationPhase.REGISTER_BEAN);
		}

		@ConditionalOnBooleanProperty(name = "idempotent.local-cache.enabled")
		static final class Enabled {

		}

		@ConditionalOnBooleanProperty(name = "idempotent.local-cache.enabled", matchIfMissing = true)
		@ConditionalOnClass(name = { "org.springframework.data.redis.connection.RedisConnectionFactory", LETTUCE })
		@ConditionalOnBean(type = "io.github.idempotent.store.redis.RedisIdempotencyStore")
		static final class RedisByDefault {

		}

	}

}
