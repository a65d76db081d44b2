package io.github.idempotent.autoconfigure;

import com.github.benmanes.caffeine.cache.Caffeine;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;
import org.springframework.util.unit.DataSize;

import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.cache.CachingIdempotencyStore;

/**
 * Puts a local cache of completed results in front of the store, whichever it is, when
 * {@code idempotent.local-cache.enabled=true} and Caffeine is on the classpath. The
 * caching store is a bean of its own, primary so that the executor (and any other user of
 * an {@link IdempotencyStore}) goes through it, while the store behind it stays a bean of
 * its concrete type for those that need that type (the JDBC purger).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(Caffeine.class)
@ConditionalOnBooleanProperty(name = "idempotent.local-cache.enabled")
class LocalCacheConfiguration {

	private static final Log logger = LogFactory.getLog(LocalCacheConfiguration.class);

	@Bean
	@Primary
	@ConditionalOnMissingBean(CachingIdempotencyStore.class)
	@ConditionalOnSingleCandidate(IdempotencyStore.class)
	CachingIdempotencyStore cachingIdempotencyStore(IdempotencyStore store, IdempotentProperties properties,
			Environment environment) {
		IdempotentProperties.LocalCache cache = properties.getLocalCache();
		DataSize maximumSize = cache.getMaximumSize();
		if (maximumSize.compareTo(properties.getMaxResultSize()) < 0) {
			// Most likely a number of results from before the property became a size.
			logger.warn("idempotent.local-cache.maximum-size is " + maximumSize.toBytes() + " bytes, less than "
					+ "idempotent.max-result-size (" + properties.getMaxResultSize().toBytes() + " bytes): larger "
					+ "results are never cached. It is a size, not a number of results: give it a unit, e.g. 16MB");
		}
		// A result completed in the caller's transaction may still roll back: it is
		// cached once read back from the store, never written through.
		// (Read from the environment: IdempotentJdbcProperties needs Boot's JDBC
		// support.)
		boolean writeThrough = !environment.getProperty("idempotent.store.jdbc.join-transaction", Boolean.class, false);
		return new CachingIdempotencyStore(store, maximumSize, cache.getTtl(), writeThrough);
	}

}
