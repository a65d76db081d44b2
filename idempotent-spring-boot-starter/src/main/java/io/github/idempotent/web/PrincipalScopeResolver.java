package io.github.idempotent.web;

import java.util.Optional;
import java.util.function.Supplier;

import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.core.context.SecurityContextHolderStrategy;
import org.springframework.security.core.context.SecurityContextImpl;
import org.springframework.util.ClassUtils;
import org.springframework.web.context.request.RequestContextHolder;

import io.github.idempotent.core.IdempotencyScopeException;
import io.github.idempotent.core.IdempotencyScopeResolver;

/**
 * Scopes keys to the authenticated principal of Spring Security, so that user B sending
 * user A's key neither sees A's response nor blocks A. Anonymous callers (an
 * {@link AnonymousAuthenticationToken}, or a web request that Spring Security let through
 * without any authentication) share the {@link #GLOBAL global} scope. A call that finds
 * no authentication at all outside a web request (an executor thread, {@code @Async}, a
 * scheduled job) fails with an {@link IdempotencyScopeException} that says how to pass
 * its scope: it never shares the global scope silently.
 * <p>
 * The caller comes from the thread's {@link SecurityContextHolder} on Spring MVC and in
 * blocking calls, and from the Reactor context ({@link ReactiveSecurityContextHolder}) in
 * reactive ones, every WebFlux handler included. There, {@link #resolveScope()} runs with
 * the reactive security context bound to the thread, so that a subclass that overrides it
 * (adding a tenant to {@code super.resolveScope()}, say) scopes the same on both stacks.
 */
public class PrincipalScopeResolver implements IdempotencyScopeResolver {

	private static final boolean servletWebPresent = ClassUtils.isPresent(
			"org.springframework.web.context.request.RequestContextHolder",
			PrincipalScopeResolver.class.getClassLoader());

	/**
	 * Key of the {@code ServerWebExchange} in the Reactor context of a WebFlux request
	 * ({@code ServerWebExchangeContextFilter.EXCHANGE_CONTEXT_ATTRIBUTE}), spelled out so
	 * that this class loads without WebFlux.
	 */
	static final String EXCHANGE_CONTEXT_KEY = "org.springframework.web.filter.reactive.ServerWebExchangeContextFilter.EXCHANGE_CONTEXT";

	@Override
	public String resolveScope() {
		Authentication authentication = SecurityContextHolder.getContext().getAuthentication();
		if (authentication == null) {
			if (servletWebPresent && RequestContextHolder.getRequestAttributes() != null) {
				// A request that Spring Security let through without authenticating it
				// (anonymous access turned off): an unknown caller, an anonymous one.
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

	@Override
	public Mono<String> resolveScope(ContextView context) {
		return Reactive.scope(context, this::resolveScope);
	}

	/**
	 * The reactive side, loaded only when a reactive call asks.
	 */
	private static final class Reactive {

		static Mono<String> scope(ContextView context, Supplier<String> resolver) {
			return ReactiveSecurityContextHolder.getContext()
				.filter((security) -> security.getAuthentication() != null)
				.map(Optional::of)
				.defaultIfEmpty(Optional.empty())
				.contextWrite((downstream) -> downstream.putAll(context))
				.map((security) -> {
					if (security.isPresent()) {
						return resolveWith(security.get(), resolver);
					}
					// A WebFlux request without authentication is an anonymous caller,
					// as on MVC; anything else is asked on its own thread, which fails
					// when that thread carries no caller either.
					return context.hasKey(EXCHANGE_CONTEXT_KEY) ? resolveWith(anonymous(), resolver) : resolver.get();
				});
		}

		private static SecurityContext anonymous() {
			return new SecurityContextImpl(new AnonymousAuthenticationToken("idempotent", "anonymousUser",
					AuthorityUtils.createAuthorityList("ROLE_ANONYMOUS")));
		}

		/**
		 * Runs {@code resolver} with {@code security} bound to the thread, so that what
		 * reads the thread's {@link SecurityContextHolder} finds the reactive caller.
		 */
		private static String resolveWith(SecurityContext security, Supplier<String> resolver) {
			SecurityContextHolderStrategy holder = SecurityContextHolder.getContextHolderStrategy();
			Supplier<SecurityContext> previous = holder.getDeferredContext();
			holder.setContext(security);
			try {
				return resolver.get();
			}
			finally {
				holder.setDeferredContext(previous);
			}
		}

	}

}
