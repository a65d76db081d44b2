package io.github.idempotent.autoconfigure;

import java.util.Locale;
import java.util.stream.Collectors;

import org.springframework.http.HttpMethod;

import io.github.idempotent.web.IdempotentRoutes;

/**
 * The configured routes, kept out of {@link IdempotentWebProperties}, which binds without
 * Spring Web.
 */
final class WebRoutes {

	private WebRoutes() {
	}

	static IdempotentRoutes of(IdempotentWebProperties web) {
		return new IdempotentRoutes(web.getRoutes()
			.stream()
			.map((route) -> new IdempotentRoutes.Route(route.getPaths(), route.getExcludePaths(),
					route.getMethods()
						.stream()
						.map((method) -> HttpMethod.valueOf(method.trim().toUpperCase(Locale.ROOT)))
						.collect(Collectors.toSet()),
					route.isRequired(), route.getTtl(), route.getLease(), route.getMaxDuration(), route.getWaitFor(),
					route.getRetryAfter()))
			.toList());
	}

}
