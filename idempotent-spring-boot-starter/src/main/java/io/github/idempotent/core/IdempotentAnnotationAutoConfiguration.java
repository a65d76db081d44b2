package io.github.idempotent.core;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;

/**
 * Auto-configuration of {@code @Idempotent} on Spring beans: the post-processor that
 * proxies them and the interceptor. It takes the executor (which reads the operations)
 * and the resolvers from {@code IdempotentAutoConfiguration}, and backs off without them
 * (that one excluded, for instance). Web handlers are guarded by the web layer either
 * way.
 */
@AutoConfiguration(afterName = "io.github.idempotent.autoconfigure.IdempotentAutoConfiguration")
@ConditionalOnBooleanProperty(name = "idempotent.enabled", matchIfMissing = true)
@ConditionalOnBean({ IdempotencyExecutor.class, IdempotencyScopeResolver.class })
public final class IdempotentAnnotationAutoConfiguration {

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static IdempotentAnnotationBeanPostProcessor idempotentAnnotationBeanPostProcessor() {
		return new IdempotentAnnotationBeanPostProcessor();
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotentInterceptor idempotentInterceptor(IdempotencyExecutor calls,
			ObjectProvider<IdempotencyKeyResolver> keyResolver, IdempotencyScopeResolver scopeResolver,
			ObjectProvider<ReactiveIdempotencyScopeResolver> reactiveScopeResolver, BeanFactory beanFactory) {
		// The resolver of the listener in hand answers; none elsewhere, the annotation
		// names a key.
		IdempotentInterceptor interceptor = new IdempotentInterceptor(calls.operations(), calls,
				IdempotencyKeyResolver.composite(keyResolver.orderedStream().toList()), scopeResolver, beanFactory);
		reactiveScopeResolver.ifAvailable(interceptor::setReactiveScopeResolver);
		return interceptor;
	}

}
