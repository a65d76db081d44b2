package io.github.idempotent.autoconfigure;

import com.github.benmanes.caffeine.cache.Caffeine;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;

import io.github.idempotent.store.IdempotencyStore;
import io.github.idempotent.store.cache.CachingIdempotencyStore;

/**
 * Puts a local cache of completed results in front of the store, whichever it is, when
 * {@code idempotent.local-cache.enabled=true} and Caffeine is on the classpath.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(Caffeine.class)
@ConditionalOnBooleanProperty(name = "idempotent.local-cache.enabled")
class LocalCacheConfiguration {

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static BeanPostProcessor idempotentLocalCachePostProcessor(ObjectProvider<IdempotentProperties> properties) {
		return new BeanPostProcessor() {

			@Override
			public Object postProcessAfterInitialization(Object bean, String beanName) {
				if (bean instanceof IdempotencyStore store && !(bean instanceof CachingIdempotencyStore)) {
					IdempotentProperties settings = properties.getObject();
					IdempotentProperties.LocalCache cache = settings.getLocalCache();
					// A result completed in the caller's transaction may still roll back:
					// it
					// is cached once read back from the store, never written through.
					boolean writeThrough = !settings.getStore().getJdbc().isJoinTransaction();
					return new CachingIdempotencyStore(store, cache.getMaximumSize(), cache.getTtl(), writeThrough);
				}
				return bean;
			}

		};
	}

}
