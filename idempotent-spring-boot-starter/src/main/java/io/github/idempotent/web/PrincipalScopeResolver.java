package io.github.idempotent.web;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;

import io.github.idempotent.core.IdempotencyScopeResolver;

/**
 * Scopes keys to the authenticated principal of Spring Security, so that user B sending
 * user A's key neither sees A's response nor blocks A. Unauthenticated and anonymous
 * callers share the global scope.
 */
public class PrincipalScopeResolver implements IdempotencyScopeResolver {

	@Override
	public String resolveScope() {
		Authentication authentication = SecurityContextHolder.getContext().getAuthentication();
		if (authentication == null || !authentication.isAuthenticated()
				|| authentication instanceof AnonymousAuthenticationToken) {
			return GLOBAL;
		}
		// Prefixed so that no principal name can equal the global scope.
		return "u=" + authentication.getName();
	}

}
