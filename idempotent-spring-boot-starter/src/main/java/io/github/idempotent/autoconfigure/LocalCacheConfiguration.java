package io.github.idempotent.autoconfigure;

import com.github.benmanes.caffeine.cache.Caffeine;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;

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

	@Bean
	@Primary
	@ConditionalOnMissingBean(CachingIdempotencyStore.class)
	@ConditionalOnSingleCandidate(IdempotencyStore.class)
	CachingIdempotencyStore cachingIdempotencyStore(IdempotencyStore store, IdempotentProperties properties) {
		IdempotentProperties.LocalCache cache = properties.getLocalCache();
		// A result completed in the caller's transaction may still roll back: it is
		// cached once read back from the store, never written through.
		boolean writeThrough = !properties.getStore().getJdbc().isJoinTransaction();
		return new CachingIdempotencyStore(store, cache.getMaximumSize(), cache.getTtl(), writeThrough);
	}

}
