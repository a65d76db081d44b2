package io.github.idempotent.web;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;

import io.github.idempotent.core.IdempotencyScopeException;
import io.github.idempotent.core.IdempotencyScopeResolver;

/**
 * Scopes keys to the authenticated principal of Spring Security, so that user B sending
 * user A's key neither sees A's response nor blocks A. Anonymous callers share the
 * {@link #GLOBAL global} scope; any other call without authentication (an executor
 * thread, {@code @Async}) fails with an {@link IdempotencyScopeException}. Reactive calls
 * run it through {@link ReactivePrincipalScopeResolver}, so a subclass scopes the same on
 * both stacks.
 */
public class PrincipalScopeResolver implements IdempotencyScopeResolver {

	private static final ThreadLocal<Boolean> requestInHand = new ThreadLocal<>();

	@Override
	public String resolveScope() {
		Authentication authentication = SecurityContextHolder.getContext().getAuthentication();
		if (authentication == null) {
			if (requestInHand.get() != null) {
				// Spring Security let it through with anonymous access turned off.
				return GLOBAL;
			}
			throw new IdempotencyScopeException("No authenticated caller to scope the idempotency key by: Spring "
					+ "Security is present, but this thread carries no Authentication (an executor thread, @Async, "
					+ "a scheduled job, a reactive call without a security context). Pass the scope yourself: "
					+ "@Idempotent(scope = \"...\") or IdempotencyTemplate's .scope(...) (a tenant, a user, or a "
					+ "fixed name for a job); propagate the caller's SecurityContext to the thread (Spring "
					+ "Security's DelegatingSecurityContextExecutor, or DelegatingSecurityContextAsyncTaskExecutor "
					+ "for @Async); subscribe reactive calls under ReactiveSecurityContextHolder.withAuthentication; "
					+ "or set idempotent.default-scope=global if every key is unique across callers");
		}
		return scopeOf(authentication);
	}

	static String ofRequestInHand(IdempotencyScopeResolver resolver) {
		requestInHand.set(Boolean.TRUE);
		try {
			return resolver.resolveScope();
		}
		finally {
			requestInHand.remove();
		}
	}

	/**
	 * The scope of a caller: {@link #GLOBAL} for an anonymous one, else {@code u=} and
	 * its name, prefixed so that no name can equal the global scope.
	 */
	protected String scopeOf(Authentication authentication) {
		if (!authentication.isAuthenticated() || authentication instanceof AnonymousAuthenticationToken) {
			return GLOBAL;
		}
		return "u=" + authentication.getName();
	}

}
