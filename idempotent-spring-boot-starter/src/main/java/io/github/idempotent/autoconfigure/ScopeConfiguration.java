package io.github.idempotent.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.security.core.context.SecurityContextHolder;

import io.github.idempotent.core.IdempotencyScopeResolver;
import io.github.idempotent.web.PrincipalScopeResolver;

/**
 * Scope of keys: the authenticated principal when Spring Security is present, else one
 * global scope.
 */
@Configuration(proxyBeanMethods = false)
@Import({ ScopeConfiguration.Principal.class, ScopeConfiguration.Global.class })
class ScopeConfiguration {

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(SecurityContextHolder.class)
	@ConditionalOnProperty(name = "idempotent.default-scope", havingValue = "principal", matchIfMissing = true)
	static class Principal {

		@Bean
		@ConditionalOnMissingBean
		IdempotencyScopeResolver idempotencyScopeResolver() {
			return new PrincipalScopeResolver();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Global {

		@Bean
		@ConditionalOnMissingBean
		IdempotencyScopeResolver idempotencyScopeResolver() {
			return () -> IdempotencyScopeResolver.GLOBAL;
		}

	}

}
