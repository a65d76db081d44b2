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
 * Puts a local cache of completed results in front of the store when Caffeine is present:
 * by default for the Redis store on Lettuce, kept right by {@link RedisRecordTracking};
 * for any store with {@code idempotent.local-cache.enabled=true}. The caching store is a
 * primary bean of its own; the store behind it stays a bean of its concrete type.
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
			logger.warn("idempotent.local-cache.maximum-size is " + maximumSize.toBytes() + " bytes, less than "
					+ "idempotent.max-result-size (" + properties.getMaxResultSize().toBytes() + " bytes): larger "
					+ "results are never cached. It is a size, not a number of results: give it a unit, e.g. 16MB");
		}
		RecordTracking tracking = recordTracking.getIfUnique();
		if (tracking != null && (tracking.isSupported() || cache.getEnabled() == null)) {
			// A setup that cannot track (Redis Cluster): a cache that never serves.
			return new CachingIdempotencyStore(store, maximumSize, cache.getTtl(), tracking);
		}
		if (tracking != null) {
			logger.warn("idempotent.local-cache.enabled=true without invalidation tracking (" + tracking
					+ "): a result deleted from the store is still replayed from the local cache for up to "
					+ "idempotent.local-cache.ttl (" + cache.getTtl() + ")");
		}
		// A result completed in the caller's transaction may still roll back: never
		// written through. (IdempotentJdbcProperties needs Boot's JDBC support.)
		boolean writeThrough = !environment.getProperty("idempotent.store.jdbc.join-transaction", Boolean.class, false);
		return new CachingIdempotencyStore(store, maximumSize, cache.getTtl(), writeThrough);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(
			name = { "org.springframework.data.redis.connection.RedisConnectionFactory", LocalCacheWanted.LETTUCE })
	@ConditionalOnBean(RedisIdempotencyStore.class)
	static class RedisTrackingConfiguration {

		// The store's own factory: the application's primary may be another Redis.
		@Bean
		@ConditionalOnMissingBean(RecordTracking.class)
		@ConditionalOnSingleCandidate(RedisIdempotencyStore.class)
		RedisRecordTracking redisRecordTracking(RedisIdempotencyStore store, IdempotentProperties properties) {
			return new RedisRecordTracking(store.getConnectionFactory(), properties.getLocalCache().getMaxStaleness());
		}

	}

	/** Explicitly enabled, or unset with the Redis store and Lettuce present. */
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
