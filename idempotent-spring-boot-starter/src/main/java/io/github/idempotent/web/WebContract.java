package io.github.idempotent.web;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.http.HttpMethod;
import org.springframework.http.server.PathContainer;
import org.springframework.util.Assert;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.aop.IdempotentOperation;
import io.github.idempotent.aop.IdempotentOperationSource;

/**
 * The settings of the HTTP contract and its routes, built once for Spring MVC and WebFlux
 * alike and handed to the recording filter, the handler adapter and the result converter.
 */
final class WebContract {

	final IdempotencyResponseHeaders headers;

	final ReplayedHeaders replayedHeaders;

	final long maxRequestSize;

	final long maxResultSize;

	private final List<Parsed> routes;

	/**
	 * @param excludedHeaders response headers never stored, besides credentials and
	 * hop-by-hop headers
	 * @param replayedOnlyHeaders when not empty, the only response headers stored
	 */
	WebContract(IdempotencyResponseHeaders headers, Collection<String> excludedHeaders,
			Collection<String> replayedOnlyHeaders, long maxRequestSize, long maxResultSize, List<Route> routes) {
		Assert.isTrue(maxRequestSize > 0, "maxRequestSize must be positive");
		Assert.isTrue(maxResultSize > 0, "maxResultSize must be positive");
		this.headers = headers;
		this.replayedHeaders = new ReplayedHeaders(excludedHeaders, replayedOnlyHeaders);
		this.maxRequestSize = maxRequestSize;
		this.maxResultSize = maxResultSize;
		this.routes = routes.stream().map(Parsed::of).toList();
	}

	ReplayCustomizers customizers(List<IdempotentReplayCustomizer> customizers) {
		return new ReplayCustomizers(customizers, this.replayedHeaders);
	}

	// With routes, every handler method: which requests a route guards is known only
	// from the request.
	boolean mayGuard(IdempotentOperationSource operations, HandlerMethod handler) {
		return !this.routes.isEmpty() || operations.get(handler.getMethod(), handler.getBeanType()) != null;
	}

	// The handler's own @Idempotent wins; else the first route that matches.
	@Nullable IdempotentOperation operation(IdempotentOperationSource operations, HandlerMethod handler, HttpMethod method,
			PathContainer path) {
		IdempotentOperation annotated = operations.get(handler.getMethod(), handler.getBeanType());
		if (annotated != null) {
			return annotated;
		}
		for (Parsed route : this.routes) {
			if (route.matches(method, path)) {
				try {
					return operations.routed(handler.getMethod(), handler.getBeanType(), route.settings());
				}
				catch (IllegalStateException ex) {
					throw new IllegalStateException("idempotent.web.routes " + route.route().paths() + " match "
							+ handler.getShortLogMessage() + ", which cannot be guarded (" + ex.getMessage()
							+ "). Add its path to the route's exclude-paths", ex);
				}
			}
		}
		return null;
	}

	/**
	 * A route of {@code idempotent.web.routes}: a request it matches is guarded as if its
	 * handler carried {@code @Idempotent} with the route's settings (docs/http.md,
	 * "Guarding routes by configuration"). A {@code null} duration takes the
	 * {@code idempotent.*} default.
	 *
	 * @param paths path patterns of the requests guarded ({@code /api/**})
	 * @param required whether a request without a key is refused with 400
	 */
	record Route(List<String> paths, List<String> excludePaths, Set<HttpMethod> methods, boolean required,
			@Nullable Duration ttl, @Nullable Duration lease, @Nullable Duration maxDuration,
			@Nullable Duration waitFor, @Nullable Duration retryAfter) {

		Route {
			Assert.notEmpty(paths, "A route needs at least one path pattern");
			Assert.notEmpty(methods, "A route needs at least one HTTP method");
			paths = List.copyOf(paths);
			excludePaths = List.copyOf(excludePaths);
			methods = Set.copyOf(methods);
		}

	}

	private record Parsed(Route route, List<PathPattern> paths, List<PathPattern> excludePaths, Idempotent settings) {

		static Parsed of(Route route) {
			Map<String, Object> settings = new HashMap<>();
			settings.put("required", route.required());
			put(settings, "ttl", route.ttl());
			put(settings, "lease", route.lease());
			put(settings, "maxDuration", route.maxDuration());
			put(settings, "waitFor", route.waitFor());
			put(settings, "retryAfter", route.retryAfter());
			return new Parsed(route, parse(route.paths()), parse(route.excludePaths()),
					MergedAnnotation.of(Idempotent.class, settings).synthesize());
		}

		private static void put(Map<String, Object> settings, String name, @Nullable Duration value) {
			if (value != null) {
				settings.put(name, value.toString());
			}
		}

		private static List<PathPattern> parse(List<String> patterns) {
			return patterns.stream().map(PathPatternParser.defaultInstance::parse).toList();
		}

		boolean matches(HttpMethod method, PathContainer path) {
			return this.route.methods().contains(method) && this.paths.stream().anyMatch((p) -> p.matches(path))
					&& this.excludePaths.stream().noneMatch((p) -> p.matches(path));
		}

	}

}
