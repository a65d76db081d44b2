package io.github.idempotent.web;

import java.util.function.Supplier;

import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.core.context.SecurityContextHolderStrategy;
import org.springframework.security.core.context.SecurityContextImpl;
import org.springframework.util.Assert;

import io.github.idempotent.core.IdempotencyScopeResolver;
import io.github.idempotent.core.ReactiveIdempotencyScopeResolver;

/**
 * The reactive side of {@link PrincipalScopeResolver}: runs the blocking resolver with
 * the caller of the Reactor context ({@link ReactiveSecurityContextHolder}) bound to the
 * thread, or an anonymous caller for a WebFlux exchange without one. Empty when the
 * context names no caller: a {@code Mono} method or {@code executeMono} then has the
 * scope of its calling thread at the call, never that of the thread that subscribes,
 * which can carry another caller's {@code SecurityContext}.
 */
public class ReactivePrincipalScopeResolver implements ReactiveIdempotencyScopeResolver {

	// Spelled out, so that this class loads without WebFlux.
	static final String EXCHANGE_CONTEXT_KEY = "org.springframework.web.filter.reactive.ServerWebExchangeContextFilter.EXCHANGE_CONTEXT";

	private final IdempotencyScopeResolver resolver;

	public ReactivePrincipalScopeResolver(IdempotencyScopeResolver resolver) {
		Assert.notNull(resolver, "resolver must not be null");
		this.resolver = resolver;
	}

	@Override
	public Mono<String> resolveScope(ContextView context) {
		return ReactiveSecurityContextHolder.getContext()
			.filter((security) -> security.getAuthentication() != null)
			.contextWrite((downstream) -> downstream.putAll(context))
			.map(this::resolveWith)
			.switchIfEmpty(Mono.defer(() -> context.hasKey(EXCHANGE_CONTEXT_KEY)
					? Mono.fromSupplier(() -> resolveWith(anonymous())) : Mono.empty()));
	}

	private static SecurityContext anonymous() {
		return new SecurityContextImpl(new AnonymousAuthenticationToken("idempotent", "anonymousUser",
				AuthorityUtils.createAuthorityList("ROLE_ANONYMOUS")));
	}

	private String resolveWith(SecurityContext security) {
		SecurityContextHolderStrategy holder = SecurityContextHolder.getContextHolderStrategy();
		Supplier<SecurityContext> previous = holder.getDeferredContext();
		holder.setContext(security);
		try {
			return this.resolver.resolveScope();
		}
		finally {
			holder.setDeferredContext(previous);
		}
	}

}
