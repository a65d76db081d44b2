package io.github.idempotent.web;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;

import io.github.idempotent.core.IdempotencyScopeException;
import io.github.idempotent.core.IdempotencyScopeResolver;

/**
 * Scopes keys to the authenticated principal of Spring Security, so that user B sending
 * user A's key neither sees A's response nor blocks A. Anonymous callers (an
 * {@link AnonymousAuthenticationToken}, or the request in hand of an HTTP handler that
 * Spring Security let through without any authentication) share the {@link #GLOBAL
 * global} scope. Any other call that finds no authentication (an executor thread,
 * {@code @Async}, a scheduled job, a thread that carries a request's attributes but not
 * its caller) fails with an {@link IdempotencyScopeException} that says how to pass its
 * scope: it never shares the global scope silently.
 * <p>
 * The caller comes from the thread's {@link SecurityContextHolder} on Spring MVC and in
 * blocking calls. Reactive calls, every WebFlux handler included, ask
 * {@link ReactivePrincipalScopeResolver}, which runs {@link #resolveScope()} with the
 * caller of the Reactor context bound to the thread, so that a subclass that overrides it
 * (adding a tenant to {@code super.resolveScope()}, say) scopes the same on both stacks.
 */
public class PrincipalScopeResolver implements IdempotencyScopeResolver {

	/**
	 * Set while the web layer asks for the scope of the request it has in hand, on the
	 * thread that dispatches it.
	 */
	private static final ThreadLocal<Boolean> requestInHand = new ThreadLocal<>();

	@Override
	public String resolveScope() {
		Authentication authentication = SecurityContextHolder.getContext().getAuthentication();
		if (authentication == null) {
			if (requestInHand.get() != null) {
				// A request that Spring Security let through without authenticating it
				// (anonymous access turned off): an anonymous caller.
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

	/**
	 * Asks {@code resolver} for the scope of the request the web layer has in hand, on
	 * the thread that dispatches it: there, a request without authentication is an
	 * anonymous caller's.
	 */
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
	 * The scope of a caller authenticated as {@code authentication}: the {@link #GLOBAL
	 * global} scope for an anonymous or unauthenticated one, else {@code u=} and its
	 * name, prefixed so that no principal name can equal the global scope.
	 */
	protected String scopeOf(Authentication authentication) {
		if (!authentication.isAuthenticated() || authentication instanceof AnonymousAuthenticationToken) {
			return GLOBAL;
		}
		return "u=" + authentication.getName();
	}

}
